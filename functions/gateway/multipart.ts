import { badRequest } from '../core/errors';

// Reads the text fields of a multipart/form-data body (model, size, language...) for routing, validation,
// cost and the log, without copying the file parts: the body itself is sent upstream untouched.

export interface MultipartFile {
  name: string;
  filename: string;
  content_type: string | null;
  bytes: number;
}

export interface MultipartForm {
  boundary: string;
  fields: Record<string, string>;
  files: MultipartFile[];
  /** Byte offsets of each text field's value in the body, for rewriting one value. */
  valueAt: Record<string, { start: number; end: number }>;
}

// Text fields are short parameters; a longer one (a prompt) is still kept, up to this size, for the log.
const MAX_FIELD_BYTES = 256 * 1024;

export function boundaryOf(contentType: string | undefined): string | undefined {
  const m = /^multipart\/form-data\s*;(?:.*;)?\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  return m ? (m[1] ?? m[2]) : undefined;
}

function headerParam(header: string, name: string): string | undefined {
  const m = new RegExp(`;\\s*${name}="((?:[^"\\\\]|\\\\.)*)"`, 'i').exec(header);
  if (m) return m[1]?.replace(/\\(.)/g, '$1');
  const bare = new RegExp(`;\\s*${name}=([^;\\s]+)`, 'i').exec(header);
  return bare?.[1];
}

/** Parses the parts' headers and text values; 400 when the body is not the multipart form it says. */
export function readMultipart(body: Buffer, contentType: string | undefined): MultipartForm {
  const boundary = boundaryOf(contentType);
  if (!boundary) {
    throw badRequest(
      'This operation takes a multipart/form-data body with a boundary.',
      null,
      'invalid_body',
    );
  }
  const delimiter = Buffer.from(`--${boundary}`);
  const form: MultipartForm = { boundary, fields: {}, files: [], valueAt: {} };
  let at = body.indexOf(delimiter);
  if (at === -1) throw badRequest('The multipart body holds no part.', null, 'invalid_body');
  for (;;) {
    const afterDelimiter = at + delimiter.length;
    // `--` right after a delimiter closes the form.
    if (body[afterDelimiter] === 0x2d && body[afterDelimiter + 1] === 0x2d) break;
    const headersEnd = body.indexOf('\r\n\r\n', afterDelimiter);
    if (headersEnd === -1) throw badRequest('A multipart part has no end of headers.', null, 'invalid_body');
    const next = body.indexOf(Buffer.from(`\r\n--${boundary}`), headersEnd + 4);
    if (next === -1) throw badRequest('The multipart body is not closed.', null, 'invalid_body');
    const headers = body.subarray(afterDelimiter, headersEnd).toString('utf8');
    const start = headersEnd + 4;
    const disposition = /^content-disposition:(.*)$/im.exec(headers)?.[1] ?? '';
    const name = headerParam(disposition, 'name');
    const filename = headerParam(disposition, 'filename');
    if (name !== undefined) {
      if (filename !== undefined) {
        const type = /^content-type:\s*(.*)$/im.exec(headers)?.[1]?.trim() ?? null;
        form.files.push({ name, filename, content_type: type, bytes: next - start });
      } else if (next - start <= MAX_FIELD_BYTES) {
        form.fields[name] = body.subarray(start, next).toString('utf8');
        form.valueAt[name] = { start, end: next };
      }
    }
    at = next + 2;
  }
  return form;
}

/** The body with one text field's value replaced: the only case where the upload is copied. */
export function replaceField(body: Buffer, form: MultipartForm, name: string, value: string): Buffer {
  const place = form.valueAt[name];
  if (!place) return body;
  return Buffer.concat([body.subarray(0, place.start), Buffer.from(value), body.subarray(place.end)]);
}
