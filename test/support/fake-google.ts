import type { ServerResponse } from 'node:http';
import { type FakeUpstream, type Handler, type Recorded, sendJson, startFakeUpstream } from './fake-upstream';

// A fake Gemini API: generateContent JSON, and streamGenerateContent?alt=sse as `data: {...}\r\n\r\n`
// events each holding a GenerateContentResponse (no [DONE]), errors as `{"error":{code,message,status}}`.

export const GEMINI_USAGE = {
  promptTokenCount: 40,
  candidatesTokenCount: 8,
  totalTokenCount: 52,
  cachedContentTokenCount: 20,
  thoughtsTokenCount: 4,
};

type Part = Record<string, unknown>;

export function plan(req: Recorded): Part[] {
  // Thoughts come back as parts marked `thought` when the request asks for them.
  const thoughts = req.body.generationConfig?.thinkingConfig?.includeThoughts
    ? [{ text: 'Let me think.', thought: true }]
    : [];
  return [...thoughts, ...answer(req)];
}

function answer(req: Recorded): Part[] {
  const contents = req.body.contents as Array<{ parts: Part[] }>;
  const last = contents[contents.length - 1]?.parts ?? [];
  const response = last.find((p) => p.functionResponse) as
    | { functionResponse: { name: string; response: unknown } }
    | undefined;
  if (req.body.tools && !response)
    return [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }];
  if (response)
    return [
      {
        text: `Tool ${response.functionResponse.name} said: ${JSON.stringify(response.functionResponse.response)}`,
      },
    ];
  if (last.some((p) => p.inlineData)) return [{ text: 'I see an inline image.' }];
  if (last.some((p) => p.fileData)) return [{ text: 'I see a linked image.' }];
  return [{ text: `Echo: ${String(last.find((p) => typeof p.text === 'string')?.text)}` }];
}

export function generateReply(req: Recorded, parts: Part[]) {
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: GEMINI_USAGE,
    modelVersion: req.path.match(/models\/([^:]+):/)?.[1] ?? 'gemini',
    responseId: 'mWdgaJ3HEpeFqtsP0aS2kAI',
  };
}

export const geminiDefault: Handler = async (req, res) => {
  const parts = plan(req);
  if (!req.path.includes(':streamGenerateContent')) return sendJson(res, 200, generateReply(req, parts));
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.flushHeaders();
  const whole = generateReply(req, parts);
  const pieces: Part[][] = parts.flatMap((p) =>
    typeof p.text === 'string' ? (p.text.match(/\S+\s*/g) ?? []).map((w) => [{ ...p, text: w }]) : [[p]],
  );
  pieces.forEach((piece, i) => {
    const lastPiece = i === pieces.length - 1;
    const event = {
      candidates: [
        {
          content: { role: 'model', parts: piece },
          index: 0,
          ...(lastPiece ? { finishReason: 'STOP' } : {}),
        },
      ],
      usageMetadata: lastPiece
        ? GEMINI_USAGE
        : { promptTokenCount: 40, cachedContentTokenCount: 20, totalTokenCount: 40 },
      modelVersion: whole.modelVersion,
      responseId: whole.responseId,
    };
    res.write(`data: ${JSON.stringify(event)}\r\n\r\n`);
  });
  res.end();
};

export function geminiError(status: number, statusName: string, message: string): Handler {
  return (_req, res: ServerResponse) =>
    sendJson(res, status, { error: { code: status, message, status: statusName } });
}

export const startFakeGoogle = (): Promise<FakeUpstream> => startFakeUpstream(geminiDefault);
