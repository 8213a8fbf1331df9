import http from 'node:http';
import { postJson } from './support';

// One streamed call, timed to its first chunk and split in two by the stamps the fake upstream puts in
// that chunk's id (`chatcmpl-bench-<request in>-<chunk out>`, monotonic ns, shared by every process):
// the way there (sent here until the upstream has the request: for the gateway, everything it does
// before calling the upstream) and the way back (the upstream writes the chunk until it is here: for the
// gateway, reading and relaying it).

export interface FirstChunk {
  /** Sent until the first body byte, ms. */
  firstByte: number;
  /** Sent until the upstream has the request, ms. */
  there: number;
  /** The upstream wrote its first chunk until the first byte arrived here, ms. */
  back: number;
}

const STAMPS = /"id":"chatcmpl-bench-(\d+)-(\d+)"/;

export function streamCall(
  port: number,
  payload: string,
  headers: Record<string, string>,
): Promise<FirstChunk> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    let first: bigint | undefined;
    const req = http.request(postJson(port, '/v1/chat/completions', payload, headers), (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        first ??= process.hrtime.bigint();
        text += d;
      });
      res.on('end', () => {
        const stamps = STAMPS.exec(text);
        if ((res.statusCode ?? 0) >= 400 || !stamps || first === undefined) {
          reject(new Error(`status ${res.statusCode}, no stamped first chunk: ${text.slice(0, 300)}`));
          return;
        }
        const ms = (ns: bigint) => Number(ns) / 1e6;
        resolve({
          firstByte: ms(first - t0),
          there: ms(BigInt(stamps[1] as string) - t0),
          back: ms(first - BigInt(stamps[2] as string)),
        });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}
