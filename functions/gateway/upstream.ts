import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { GatewayError, invalidHost, upstreamTimeout, upstreamUnreachable } from '../core/errors';
import type { StopSignal } from '../core/stop-signal';
import { checkOutboundUrl, guardedAgents, hostNotAllowed, RefusedAddressError } from './address-guard';

export interface UpstreamRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** The client's signal: when it aborts, so does the upstream call. */
  signal: StopSignal;
  /** Time allowed until the reply starts, and then between two chunks of its body. */
  timeoutMs: number;
}

export interface UpstreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: AsyncIterable<Buffer>;
}

class Deadline {
  private timer?: NodeJS.Timeout;
  expired = false;
  constructor(
    private readonly ms: number,
    private readonly onExpire: () => void,
  ) {
    this.reset();
  }
  reset(): void {
    // Called for every chunk: rearming the same timer costs less than a new one.
    if (this.timer) {
      this.timer.refresh();
      return;
    }
    this.timer = setTimeout(() => {
      this.expired = true;
      this.onExpire();
    }, this.ms);
    this.timer.unref();
  }
  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

export function toGatewayError(error: unknown, timedOut: boolean, timeoutMs: number): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof RefusedAddressError) return hostNotAllowed(error);
  if (timedOut) return upstreamTimeout(timeoutMs);
  const code = (error as NodeJS.ErrnoException).code ?? '';
  switch (code) {
    case 'ECONNREFUSED':
      return upstreamUnreachable('connection refused');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return upstreamUnreachable('the host name could not be resolved');
    case 'ETIMEDOUT':
    case 'ECONNABORTED':
      return upstreamUnreachable('connecting timed out', 504);
    case 'ECONNRESET':
    case 'EPIPE':
      return upstreamUnreachable('the connection was reset');
    default:
      return upstreamUnreachable(code ? `network error ${code}` : 'network error');
  }
}

export class ClientGoneError extends Error {
  constructor() {
    super('the client disconnected');
    this.name = 'ClientGoneError';
  }
}

/**
 * What Node's client makes of a URL and a header object (`Host`, `Authorization` from the URL's user
 * info, `Content-Length` from the body), with the headers as a list: Node then writes them as they are,
 * still refusing a bad name or value, instead of storing and checking each one twice: about a quarter
 * of what creating the request costs.
 */
function requestOptions(req: UpstreamRequest, agent: http.Agent): http.RequestOptions {
  const { url } = req;
  const headers: string[] = [];
  let host = false;
  let authorization = false;
  for (const name in req.headers) {
    const lower = name.toLowerCase();
    // The body's length is the one sent, whatever a caller said.
    if (lower === 'content-length' && req.body !== undefined) continue;
    if (lower === 'host') host = true;
    else if (lower === 'authorization') authorization = true;
    headers.push(name, req.headers[name] as string);
  }
  if (!host) headers.push('host', url.host);
  if (!authorization && (url.username || url.password)) {
    const user = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.push('authorization', `Basic ${Buffer.from(user).toString('base64')}`);
  }
  if (req.body !== undefined) headers.push('content-length', String(Buffer.byteLength(req.body)));
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return {
    protocol: url.protocol,
    hostname,
    port: url.port,
    path: url.pathname + url.search,
    method: req.method,
    headers,
    agent,
  };
}

/** Sends the request; resolves once the reply's status and headers arrive. */
export function sendUpstream(req: UpstreamRequest): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    try {
      checkOutboundUrl(req.url);
    } catch (error) {
      reject(error);
      return;
    }
    const agent = guardedAgents[req.url.protocol as 'http:' | 'https:'];
    if (!agent) {
      reject(invalidHost('The provider URL must be http or https.'));
      return;
    }
    if (req.signal.aborted) {
      reject(new ClientGoneError());
      return;
    }
    const transport = req.url.protocol === 'https:' ? https : http;
    const outgoing = transport.request(requestOptions(req, agent));
    const deadline = new Deadline(req.timeoutMs, () => outgoing.destroy(new Error('timeout')));
    const onAbort = () => outgoing.destroy(new ClientGoneError());
    req.signal.addEventListener('abort', onAbort, { once: true });
    let settled = false;

    outgoing.on('error', (error) => {
      deadline.clear();
      req.signal.removeEventListener('abort', onAbort);
      if (settled) return;
      settled = true;
      reject(
        error instanceof ClientGoneError ? error : toGatewayError(error, deadline.expired, req.timeoutMs),
      );
    });
    outgoing.on('response', (res: IncomingMessage) => {
      settled = true;
      deadline.reset();
      resolve({
        status: res.statusCode ?? 502,
        headers: res.headers,
        body: new UpstreamBody(res, deadline, req.signal, onAbort, req.timeoutMs),
      });
    });
    outgoing.end(req.body);
  });
}

/**
 * An upstream reply's body: iterated chunk by chunk (streams), or read whole by `readAll` with plain
 * events, which costs a fraction of the async iterator's promises per chunk on the request path.
 * Either way: the deadline rearms at each chunk, the client's abort ends the read with ClientGoneError,
 * a body cut before its end fails as a reset connection, and the socket goes when the read stops early.
 */
class UpstreamBody implements AsyncIterable<Buffer> {
  constructor(
    private readonly res: IncomingMessage,
    private readonly deadline: Deadline,
    private readonly signal: StopSignal,
    private readonly onAbort: () => void,
    private readonly timeoutMs: number,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    return this.chunks();
  }

  private async *chunks(): AsyncGenerator<Buffer> {
    const { res, deadline, signal } = this;
    const stopOnAbort = () => res.destroy(new ClientGoneError());
    signal.addEventListener('abort', stopOnAbort, { once: true });
    let complete = false;
    res.once('end', () => {
      complete = true;
    });
    try {
      for await (const chunk of res) {
        deadline.reset();
        yield chunk as Buffer;
      }
      // A reply cut mid-body ends iteration quietly on some Node versions: say so.
      if (!complete && !res.complete) throw cutReply();
    } catch (error) {
      throw this.failure(error);
    } finally {
      this.release(stopOnAbort);
    }
  }

  /** The whole body as text; more than `maxBytes` fails (and drops the connection). */
  text(maxBytes: number): Promise<string> {
    const { res, deadline, signal } = this;
    if (res.complete && !res.readableFlowing && !signal.aborted) return this.buffered(maxBytes);
    return new Promise((resolve, reject) => {
      const parts: Buffer[] = [];
      let size = 0;
      let settled = false;
      const stopOnAbort = () => res.destroy(new ClientGoneError());
      const settle = (error: Error | undefined) => {
        if (settled) return;
        settled = true;
        res.off('data', onData);
        res.off('end', onEnd);
        res.off('error', onError);
        res.off('close', onClose);
        // Whatever the response does from now on is no one's concern, and must not be an unhandled error.
        res.on('error', () => undefined);
        this.release(stopOnAbort);
        if (error) reject(error);
        else
          resolve(
            parts.length === 1
              ? (parts[0] as Buffer).toString('utf8')
              : Buffer.concat(parts).toString('utf8'),
          );
      };
      const onData = (chunk: Buffer) => {
        deadline.reset();
        size += chunk.length;
        if (size > maxBytes) settle(upstreamUnreachable(`the reply exceeded ${maxBytes} bytes`));
        else parts.push(chunk);
      };
      const onEnd = () => settle(undefined);
      const onError = (error: Error) => settle(this.failure(error));
      // Closed without an error before its end: cut mid-body, unless the parser had the whole body.
      const onClose = () => settle(res.complete ? undefined : this.failure(cutReply()));
      res.on('data', onData);
      res.once('end', onEnd);
      res.once('error', onError);
      res.once('close', onClose);
      if (signal.aborted) stopOnAbort();
      else signal.addEventListener('abort', stopOnAbort, { once: true });
    });
  }

  /**
   * A reply whose body came in with its headers (most whole replies) is already parsed and buffered when
   * it is read: taken at once, without a data listener and a flowing mode. Reading it ends the reply;
   * the text is given once it has ended, when Node has handed its socket back to the pool.
   */
  private buffered(maxBytes: number): Promise<string> {
    const { res } = this;
    const body = res.read() as Buffer | null;
    this.release();
    // Whatever the response does from now on is no one's concern, and must not be an unhandled error.
    res.on('error', () => undefined);
    if (body !== null && body.length > maxBytes) {
      return Promise.reject(upstreamUnreachable(`the reply exceeded ${maxBytes} bytes`));
    }
    const text = body === null ? '' : body.toString('utf8');
    // The body is whole: a reply destroyed before its end event (closed) still gives it.
    return new Promise((resolve) => {
      if (res.readableEnded || res.destroyed) return resolve(text);
      const done = () => {
        res.off('end', done);
        res.off('close', done);
        resolve(text);
      };
      res.once('end', done);
      res.once('close', done);
    });
  }

  private failure(error: unknown): Error {
    if (error instanceof ClientGoneError || this.signal.aborted) return new ClientGoneError();
    return toGatewayError(error, this.deadline.expired, this.timeoutMs);
  }

  /**
   * Ends the read: the deadline and the abort listeners go (`stopOnAbort` where the read added one), and a
   * reply not read to its end drops its connection.
   */
  private release(stopOnAbort?: () => void): void {
    this.deadline.clear();
    if (stopOnAbort) this.signal.removeEventListener('abort', stopOnAbort);
    this.signal.removeEventListener('abort', this.onAbort);
    if (!this.res.complete) this.res.destroy();
  }
}

const cutReply = () => Object.assign(new Error('aborted'), { code: 'ECONNRESET' });

/** Reads a whole reply body, refusing more than `maxBytes`. */
export async function readAll(body: AsyncIterable<Buffer>, maxBytes: number): Promise<string> {
  if (body instanceof UpstreamBody) return body.text(maxBytes);
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) throw upstreamUnreachable(`the reply exceeded ${maxBytes} bytes`);
    parts.push(chunk);
  }
  return Buffer.concat(parts).toString('utf8');
}
