import http from 'node:http';
import https from 'node:https';
import { UpdateItemCommand, type UpdateItemCommandOutput } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  BatchWriteCommand,
  type BatchWriteCommandOutput,
  DeleteCommand,
  type DeleteCommandOutput,
  GetCommand,
  type GetCommandOutput,
  PutCommand,
  type PutCommandOutput,
  QueryCommand,
  type QueryCommandOutput,
  ScanCommand,
  type ScanCommandOutput,
  UpdateCommand,
  type UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { type NativeAttributeValue, unmarshall } from '@aws-sdk/util-dynamodb';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { Sha256 } from '../core/sha256';
import { marshallItem } from './wire-marshall';

// DynamoDB over its JSON API: the document-client calls the stores make (the command classes of
// `@aws-sdk/lib-dynamodb`, same inputs and outputs), signed with SigV4 and sent on a keep-alive agent.
// The SDK client with its schemas, middleware stack and endpoint rules was two thirds of the chat bundle
// and most of its cold start; the calls here need none of it. Lambda bundles alias `@aws-sdk/lib-dynamodb`
// to ./dynamodb-commands.ts (lib/bundling.ts), so only these classes' names travel with the functions.

type Native = Record<string, NativeAttributeValue>;
type Wire = Record<string, unknown>;

const toWire = (item: Native | undefined) => (item === undefined ? undefined : marshallItem(item));
const fromWire = (item: Wire | undefined) =>
  item === undefined ? undefined : unmarshall(item as Parameters<typeof unmarshall>[0]);

interface Operation {
  target: string;
  request(input: Wire): Wire;
  response(output: Wire): Wire;
}

/** Only the fields that hold items, keys or values change between the document and the wire shapes. */
function mapFields(value: Wire, fields: string[], map: (item: Wire | undefined) => unknown): Wire {
  const out = { ...value };
  for (const field of fields) if (out[field] !== undefined) out[field] = map(out[field] as Wire);
  return out;
}

const request =
  (...fields: string[]) =>
  (input: Wire) =>
    mapFields(input, fields, (v) => toWire(v as Native));
const response =
  (...fields: string[]) =>
  (output: Wire) =>
    mapFields(output, fields, fromWire);

/** Per table: a list of write requests (`PutRequest.Item`, `DeleteRequest.Key`), either way. */
function mapWrites(requests: Wire | undefined, map: (item: Wire | undefined) => unknown): Wire | undefined {
  if (!requests) return requests;
  return Object.fromEntries(
    Object.entries(requests).map(([table, list]) => [
      table,
      (list as Wire[]).map((w) => {
        const put = w.PutRequest as Wire | undefined;
        const del = w.DeleteRequest as Wire | undefined;
        // Built by assignment: an object literal that starts with a spread costs V8 about 1 µs more for
        // each member after it, and a log batch has 50 of these.
        const out: Wire = {};
        if (put) out.PutRequest = mapFields(put, ['Item'], map);
        if (del) out.DeleteRequest = mapFields(del, ['Key'], map);
        return out;
      }),
    ]),
  );
}

/** Per table: `{Keys: [...], ...}` for BatchGetItem requests and unprocessed keys. */
function mapKeys(requests: Wire | undefined, map: (item: Wire | undefined) => unknown): Wire | undefined {
  if (!requests) return requests;
  return Object.fromEntries(
    Object.entries(requests).map(([table, spec]) => [
      table,
      { ...(spec as Wire), Keys: ((spec as Wire).Keys as Wire[]).map((k) => map(k)) },
    ]),
  );
}

const byTable = (responses: Wire | undefined) =>
  responses &&
  Object.fromEntries(Object.entries(responses).map(([t, items]) => [t, (items as Wire[]).map(fromWire)]));

/** Query and Scan: values and the start key go out marshalled, pages of items come back. */
const listing = (target: string): Operation => ({
  target,
  request: request('ExpressionAttributeValues', 'ExclusiveStartKey'),
  response: (out) => ({
    ...response('LastEvaluatedKey')(out),
    ...(out.Items ? { Items: (out.Items as Wire[]).map(fromWire) } : {}),
  }),
});

const same = (value: Wire) => value;

const OPERATIONS = new Map<unknown, Operation>([
  // The low-level command: its values are already in DynamoDB's attribute format (a budget reservation).
  [UpdateItemCommand, { target: 'UpdateItem', request: same, response: same }],
  [GetCommand, { target: 'GetItem', request: request('Key'), response: response('Item') }],
  [
    PutCommand,
    {
      target: 'PutItem',
      request: request('Item', 'ExpressionAttributeValues'),
      response: response('Attributes'),
    },
  ],
  [
    UpdateCommand,
    {
      target: 'UpdateItem',
      request: request('Key', 'ExpressionAttributeValues'),
      response: response('Attributes'),
    },
  ],
  [
    DeleteCommand,
    {
      target: 'DeleteItem',
      request: request('Key', 'ExpressionAttributeValues'),
      response: response('Attributes'),
    },
  ],
  [QueryCommand, listing('Query')],
  [ScanCommand, listing('Scan')],
  [
    BatchGetCommand,
    {
      target: 'BatchGetItem',
      request: (input) => ({ ...input, RequestItems: mapKeys(input.RequestItems as Wire, (k) => toWire(k)) }),
      response: (out) => ({
        ...out,
        Responses: byTable(out.Responses as Wire | undefined),
        UnprocessedKeys: mapKeys(out.UnprocessedKeys as Wire | undefined, fromWire),
      }),
    },
  ],
  [
    BatchWriteCommand,
    {
      target: 'BatchWriteItem',
      request: (input) => ({
        ...input,
        RequestItems: mapWrites(input.RequestItems as Wire, (i) => toWire(i)),
      }),
      response: (out) => ({
        ...out,
        UnprocessedItems: mapWrites(out.UnprocessedItems as Wire | undefined, fromWire),
      }),
    },
  ],
]);

/** A DynamoDB error: `name` is the exception's (`ConditionalCheckFailedException`), as the SDK names it. */
export class DynamoDBError extends Error {
  readonly $metadata: { httpStatusCode: number; attempts: number };
  readonly $fault: 'client' | 'server';
  constructor(name: string, message: string, status: number, attempts: number) {
    super(message);
    this.name = name;
    this.$metadata = { httpStatusCode: status, attempts };
    this.$fault = status >= 500 ? 'server' : 'client';
  }
}

// What the SDK's standard retry strategy retries: throttling, server faults, dropped connections.
const THROTTLES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'LimitExceededException',
  'TransactionInProgressException',
]);
const NETWORK = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNREFUSED', 'EAI_AGAIN', 'ENOTFOUND']);

function retryable(error: unknown): boolean {
  if (error instanceof DynamoDBError) return error.$fault === 'server' || THROTTLES.has(error.name);
  return NETWORK.has((error as NodeJS.ErrnoException).code ?? '');
}

/** A value, or a function read at each call (a local server restarted in one process moves its DynamoDB). */
type PerCall = string | undefined | (() => string | undefined);

/** Another way to reach DynamoDB than signed HTTPS: the local server's embedded DynamoDB, in memory. */
export interface DynamoTransport {
  /** `background`: no request waits on the call (log and counter writes); it may yield to those that do. */
  send(target: string, body: string, background?: boolean): Promise<Reply>;
}

export interface SendOptions {
  /**
   * No request waits on this call (log entries and counters written after the reply): the embedded
   * DynamoDB serves the calls requests wait on first. DynamoDB itself treats every call alike.
   */
  background?: boolean;
}

export interface DynamoDBHttpOptions {
  /** When set, calls go through it, unsigned, instead of over HTTP. */
  transport?: DynamoTransport;
  /** `DYNAMODB_ENDPOINT`: the embedded DynamoDB locally; DynamoDB of the region otherwise. */
  endpoint?: PerCall;
  /** The region to sign for (and whose endpoint to call): `us-east-1` when none is given. */
  region?: PerCall;
  maxAttempts?: number;
  credentials?: AwsCredentialIdentityProvider;
}

export interface Reply {
  status: number;
  body: string;
}

// A call on a dead connection fails (and is retried) after this long without a byte, instead of hanging.
const REQUEST_TIMEOUT_MS = 10_000;

/** A command of `@aws-sdk/lib-dynamodb` (or its Lambda stand-in): only its class and `input` are read. */
interface Command {
  readonly input: object;
}

const read = (value: PerCall) => (typeof value === 'function' ? value() : value);

interface Target {
  url: URL;
  signer: SignatureV4;
}

export class DynamoDBHttpClient {
  private readonly maxAttempts: number;
  private readonly agents: Partial<Record<string, http.Agent>> = {};
  private credentials?: AwsCredentialIdentityProvider;
  private target?: Target & { key: string };

  constructor(private readonly options: DynamoDBHttpOptions = {}) {
    this.maxAttempts = options.maxAttempts ?? 3;
  }

  send(command: GetCommand, options?: SendOptions): Promise<GetCommandOutput>;
  send(command: PutCommand, options?: SendOptions): Promise<PutCommandOutput>;
  send(command: UpdateCommand, options?: SendOptions): Promise<UpdateCommandOutput>;
  send(command: UpdateItemCommand, options?: SendOptions): Promise<UpdateItemCommandOutput>;
  send(command: DeleteCommand, options?: SendOptions): Promise<DeleteCommandOutput>;
  send(command: QueryCommand, options?: SendOptions): Promise<QueryCommandOutput>;
  send(command: ScanCommand, options?: SendOptions): Promise<ScanCommandOutput>;
  send(command: BatchGetCommand, options?: SendOptions): Promise<BatchGetCommandOutput>;
  send(command: BatchWriteCommand, options?: SendOptions): Promise<BatchWriteCommandOutput>;
  async send(command: Command, options: SendOptions = {}): Promise<unknown> {
    const operation = OPERATIONS.get(command.constructor);
    if (!operation) throw new Error(`unsupported DynamoDB command ${command.constructor.name}`);
    const body = JSON.stringify(operation.request(command.input as Wire));
    for (let attempt = 1; ; attempt++) {
      try {
        const reply = await this.post(operation.target, body, options.background === true);
        const parsed = reply.body ? (JSON.parse(reply.body) as Wire) : {};
        if (reply.status >= 300) {
          const type = String(parsed.__type ?? parsed.code ?? 'UnknownError');
          const message = String(parsed.message ?? parsed.Message ?? `DynamoDB answered ${reply.status}`);
          throw new DynamoDBError(type.slice(type.lastIndexOf('#') + 1), message, reply.status, attempt);
        }
        return {
          ...operation.response(parsed),
          $metadata: { httpStatusCode: reply.status, attempts: attempt },
        };
      } catch (error) {
        if (attempt >= this.maxAttempts || !retryable(error)) throw error;
        // Full jitter on an exponential base, as the SDK's standard strategy.
        await new Promise((resolve) =>
          setTimeout(resolve, Math.random() * Math.min(20_000, 100 * 2 ** attempt)),
        );
      }
    }
  }

  /** Keep-alive sockets would keep a process alive after its work: tests and scripts close them. */
  destroy(): void {
    for (const agent of Object.values(this.agents)) agent?.destroy();
  }

  /** Where to send and how to sign, rebuilt only when the endpoint or the region changes. */
  private async resolve(): Promise<Target> {
    const region = read(this.options.region) ?? 'us-east-1';
    const endpoint = read(this.options.endpoint);
    const key = `${region} ${endpoint ?? ''}`;
    if (this.target?.key === key) return this.target;
    if (!this.credentials) {
      let provider = this.options.credentials;
      if (!provider) {
        // In Lambda bundles this is the env-only provider (lib/bundling.ts ALIASES), loaded on first use.
        const { defaultProvider } = await import('@aws-sdk/credential-provider-node');
        provider = defaultProvider();
      }
      this.credentials = memoised(provider);
    }
    const suffix = region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com';
    const url = new URL(endpoint ?? `https://dynamodb.${region}.${suffix}/`);
    const signer = new SignatureV4({
      service: 'dynamodb',
      region,
      credentials: this.credentials,
      sha256: Sha256,
    });
    this.target = { key, url, signer };
    return this.target;
  }

  private agent(protocol: string): http.Agent {
    let agent = this.agents[protocol];
    if (!agent) {
      agent = new (protocol === 'http:' ? http : https).Agent({ keepAlive: true, maxSockets: 50 });
      this.agents[protocol] = agent;
    }
    return agent;
  }

  private async post(operation: string, body: string, background: boolean): Promise<Reply> {
    if (this.options.transport) return this.options.transport.send(operation, body, background);
    const { url, signer } = await this.resolve();
    const signed = await signer.sign({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      headers: {
        host: url.host,
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `DynamoDB_20120810.${operation}`,
      },
      body,
    });
    const headers = { ...signed.headers, 'content-length': String(Buffer.byteLength(body)) };
    const transport = url.protocol === 'http:' ? http : https;
    return new Promise((resolve, reject) => {
      const req = transport.request(
        url,
        { method: 'POST', headers, agent: this.agent(url.protocol) },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (chunk: Buffer) => parts.push(chunk));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }),
          );
          res.on('error', reject);
        },
      );
      req.setTimeout(REQUEST_TIMEOUT_MS, () =>
        req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })),
      );
      req.on('error', reject);
      req.end(body);
    });
  }
}

// Credentials that expire (a role's) are fetched again five minutes before they do; others once.
function memoised(provider: AwsCredentialIdentityProvider): AwsCredentialIdentityProvider {
  let current: Promise<AwsCredentialIdentity> | undefined;
  let expires = Number.POSITIVE_INFINITY;
  return () => {
    if (!current || Date.now() > expires - 300_000) {
      current = provider().then((c) => {
        expires = c.expiration?.getTime() ?? Number.POSITIVE_INFINITY;
        return c;
      });
      current.catch(() => {
        current = undefined;
      });
    }
    return current;
  };
}
