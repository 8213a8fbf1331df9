import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { InvokeStoreBase } from '@aws/lambda-invoke-store';
import type { Context } from 'aws-lambda';

// The response-streaming globals of the Lambda Node.js runtime, for the local server. As in Lambda,
// `HttpResponseStream.from` sets the status and headers, sent with the first write (or the end).

interface Prelude {
  statusCode: number;
  headers?: Record<string, string>;
  cookies?: string[];
}

const STREAMING = Symbol.for('gateway.local.streaming');
const SENT_HEADERS = Symbol('gateway.local.sentHeaders');
type SentHeaders = Record<string, string | string[]>;

/** A reply header, whether set on the response or sent with a function's reply (see sendHead). */
export function replyHeader(res: ServerResponse, name: string): string | undefined {
  const value = res.getHeader(name) ?? (res as { [SENT_HEADERS]?: SentHeaders })[SENT_HEADERS]?.[name];
  return typeof value === 'string' ? value : undefined;
}

export class LocalResponseStream extends Writable {
  private prelude: Prelude = { statusCode: 200 };
  private headSent = false;

  constructor(private readonly res: ServerResponse) {
    super({ decodeStrings: false });
    // The socket closing before the reply ended means the client went away.
    res.once('close', () => {
      if (!res.writableFinished) this.destroy();
    });
  }

  /** Lambda's stream has it; the prelude's headers say everything here. */
  setContentType(_contentType: string): void {}

  setPrelude(prelude: Prelude): void {
    this.prelude = prelude;
  }

  private sendHead(): void {
    if (this.headSent) return;
    this.headSent = true;
    // Given to writeHead whole, so Node checks and writes each header once instead of storing it first;
    // a name given twice in two cases is sent once, as setHeader would. Kept for the server's request line.
    const headers: SentHeaders = {};
    for (const [name, value] of Object.entries(this.prelude.headers ?? {}))
      headers[name.toLowerCase()] = value;
    if (this.prelude.cookies?.length) headers['set-cookie'] = this.prelude.cookies;
    (this.res as { [SENT_HEADERS]?: SentHeaders })[SENT_HEADERS] = headers;
    // No flushHeaders(): a write or the end always follows at once, and Node sends the headers with it,
    // in one packet instead of two.
    this.res.writeHead(this.prelude.statusCode, headers);
  }

  override _write(
    chunk: Buffer | string,
    _encoding: BufferEncoding,
    callback: (error?: Error | null) => void,
  ): void {
    this.sendHead();
    // The callback fires once the chunk is handed to the socket: back-pressure, and no buffering. A
    // chunk the socket takes at once is acknowledged at once, so that an end that follows at once goes
    // out in the same packet.
    let called = false;
    const taken = this.res.write(chunk, (error) => {
      if (called) return;
      called = true;
      callback(error ?? null);
    });
    if (taken && !called) {
      called = true;
      callback();
    }
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // As on Lambda, a response stream destroyed before its end cuts the client's transfer.
    if (!this.res.writableFinished) this.res.destroy();
    callback(error);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.sendHead();
    this.res.end(() => callback());
  }
}

type InvocationContext = Record<string | symbol, unknown>;

/**
 * The runtime's invoke store in its concurrent mode, as on Lambda Managed Instances: each invocation runs in
 * its own context, so Powertools keeps each one's logger context and keys and metric dimensions apart,
 * although the local server runs many invocations at once in one process.
 */
class LocalInvokeStore extends InvokeStoreBase {
  private readonly storage = new AsyncLocalStorage<InvocationContext>();

  getContext(): InvocationContext | undefined {
    return this.storage.getStore();
  }

  hasContext(): boolean {
    return this.storage.getStore() !== undefined;
  }

  get<T = unknown>(key: string | symbol): T | undefined {
    return this.storage.getStore()?.[key] as T | undefined;
  }

  set<T = unknown>(key: string | symbol, value: T): void {
    if (this.isProtectedKey(key))
      throw new Error(`Cannot modify protected Lambda context field: ${String(key)}`);
    const context = this.storage.getStore();
    if (!context) throw new Error('No invocation context');
    context[key] = value;
  }

  run<T>(context: InvocationContext, fn: () => T): T {
    return this.storage.run(context, fn);
  }
}

const invokeStore = new LocalInvokeStore();

/** Runs one invocation of a handler in its own invoke-store context, as the runtime does. */
export function invoke<T>(context: Context, handler: (context: Context) => Promise<T>): Promise<T> {
  return invokeStore.run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: context.awsRequestId }, () =>
    handler(context),
  );
}

export function installAwsLambdaShim(): void {
  // The SDK's invoke store may have created the object already; add the runtime's members to it.
  const global = globalThis as { awslambda?: Record<string, unknown> };
  global.awslambda ??= {};
  const target = global.awslambda;
  // Powertools scopes its state to the invocation when this is set and the store is there.
  process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= '1000';
  target.InvokeStore = invokeStore;
  if (typeof target.streamifyResponse === 'function') return;
  Object.assign(target, {
    streamifyResponse<T>(handler: T): T {
      Object.defineProperty(handler, STREAMING, { value: true });
      return handler;
    },
    HttpResponseStream: {
      from(stream: LocalResponseStream, prelude: Prelude): LocalResponseStream {
        stream.setPrelude(prelude);
        return stream;
      },
    },
  });
}
