import type { MultipartForm } from './multipart';

// OpenAI's audio translation replies carry no usage and no duration unless the format is verbose_json,
// and translation is billed per minute of audio. The gateway asks the provider for verbose_json (which
// has the duration), prices it like a transcription, and answers in the format the client asked for.

const VERBOSE = 'verbose_json';

/** The multipart body with these text fields set: replaced where present, added where not. */
export function withFields(body: Buffer, form: MultipartForm, values: Record<string, string>): Buffer {
  const edits: Array<{ start: number; end: number; text: string }> = [];
  // A new part goes right before the closing delimiter, which the form has checked is there.
  const closing = body.lastIndexOf(`--${form.boundary}--`);
  for (const [name, value] of Object.entries(values)) {
    const at = form.valueAt[name];
    if (at) edits.push({ ...at, text: value });
    else {
      const part = `--${form.boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
      edits.push({ start: closing, end: closing, text: part });
    }
  }
  // From the end backwards, so that earlier offsets stay right.
  edits.sort((a, b) => b.start - a.start);
  let out = body;
  for (const e of edits)
    out = Buffer.concat([out.subarray(0, e.start), Buffer.from(e.text), out.subarray(e.end)]);
  return out;
}

/** The fields the provider is sent: verbose_json, whatever the client asked. */
export const translationFields = (): Record<string, string> => ({ response_format: VERBOSE });

const isObject = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === 'object' && !Array.isArray(v);

function timestamp(seconds: number, separator: ',' | '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(ms % 1000, 3)}`;
}

/** The provider's verbose_json reply in the format the client asked for (json by default). */
export function translationReply(format: unknown, reply: unknown): { contentType: string; body: string } {
  const r = isObject(reply) ? reply : {};
  const text = typeof r.text === 'string' ? r.text : '';
  if (format === VERBOSE) return { contentType: 'application/json', body: JSON.stringify(reply) };
  if (format === 'text') return { contentType: 'text/plain; charset=utf-8', body: `${text}\n` };
  if (format === 'srt' || format === 'vtt') {
    const segments = (Array.isArray(r.segments) ? r.segments : []).filter(isObject);
    const sep = format === 'srt' ? ',' : '.';
    const cues = segments.map((s, i) => {
      const time = `${timestamp(Number(s.start) || 0, sep)} --> ${timestamp(Number(s.end) || 0, sep)}`;
      const cue = `${time}\n${String(s.text ?? '').trim()}\n`;
      return format === 'srt' ? `${i + 1}\n${cue}` : cue;
    });
    return {
      contentType: 'text/plain; charset=utf-8',
      body: `${format === 'vtt' ? 'WEBVTT\n\n' : ''}${cues.join('\n')}\n`,
    };
  }
  return { contentType: 'application/json', body: JSON.stringify({ text }) };
}
