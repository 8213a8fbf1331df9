// What Lambda bundles get for `node:stream/web` (lib/bundling.ts ALIASES). Its one importer is Middy's
// core, for its `streamifyResponse` mode, where it tests a handler's reply with `instanceof ReadableStream`.
// The gateway does not use that mode (functions/middleware/stream-response.ts writes the reply itself),
// yet the import alone made every cold start load Node's web streams: about 8 ms of a 60-70 ms import.
// The object below answers the same test against Node's own ReadableStream, which Node loads only when
// it is first asked for.

export const ReadableStream = {
  [Symbol.hasInstance]: (value: unknown): boolean => value instanceof globalThis.ReadableStream,
} as unknown as typeof globalThis.ReadableStream;
