// The CloudFront Function (viewer request) of the realtime behaviour. API Gateway WebSocket APIs answer
// only on their stage path (`/v1`), while the public contract puts realtime at `/v1/realtime` on the same
// base URL as every HTTP operation; this function bridges the two by rewriting the URI before CloudFront
// forwards the handshake. The source is built here as a string so that tests can run exactly the code
// that CloudFront runs.

/**
 * Source of a `cloudfront-js-2.0` function that replaces the URI `publicPath` with `stagePath`. Only that
 * exact URI is rewritten, so a broader path pattern added later never sends other paths to the stage by
 * accident. The query string (`?model=...`) is a separate field of the event and stays as it is.
 */
export function realtimeRewriteCode(publicPath: string, stagePath: string): string {
  for (const path of [publicPath, stagePath]) {
    if (!/^\/[A-Za-z0-9_\-/.]*$/.test(path)) throw new Error(`not a plain URI path: ${JSON.stringify(path)}`);
  }
  return [
    'function handler(event) {',
    '  var request = event.request;',
    `  if (request.uri === ${JSON.stringify(publicPath)}) request.uri = ${JSON.stringify(stagePath)};`,
    '  return request;',
    '}',
    '',
  ].join('\n');
}
