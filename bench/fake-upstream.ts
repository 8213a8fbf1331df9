import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A zero-latency OpenAI-compatible upstream for the benchmark, in its own process. Streams send their
// first chunk at once and the rest STREAM_GAP_MS apart. The first chunk's id holds when the request came
// in and when that chunk went out (`process.hrtime`, the machine's monotonic clock, which every process
// on it shares), so the bench can split a first chunk's time into the way there and the way back
// (`bench/first-chunk.ts`).
const STREAM_CHUNKS = 5;
const STREAM_GAP_MS = 20;

const reply = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'pong' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 8, completion_tokens: 1, total_tokens: 9 },
});
const chunk = (content: string, id = 'c') =>
  `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

const server = http.createServer({ noDelay: true }, (req, res) => {
  const received = process.hrtime.bigint();
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => {
    const stream = Buffer.concat(parts).includes('"stream":true');
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
      res.end(reply);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk('first', `chatcmpl-bench-${received}-${process.hrtime.bigint()}`));
    let sent = 1;
    const timer = setInterval(() => {
      if (sent++ < STREAM_CHUNKS) {
        res.write(chunk(' more'));
        return;
      }
      clearInterval(timer);
      res.write(
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 8, completion_tokens: STREAM_CHUNKS, total_tokens: 8 + STREAM_CHUNKS } })}\n\n`,
      );
      res.end('data: [DONE]\n\n');
    }, STREAM_GAP_MS);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  console.log(`fake upstream on ${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => process.exit(0));
