// The channel that carries a realtime client's messages from the `$default` route, where API Gateway
// delivers them one invocation at a time, to the relay that owns the session's upstream socket. On AWS it is
// one SQS FIFO queue per connection, long-polled by the relay; locally an in-process queue with the same
// behaviour. One queue per connection keeps the relay's receive to its own messages, in order.
import { settings } from '../core/settings';

export type ClientMessage = (
  | { kind: 'text'; data: string }
  /** Bytes, base64-encoded. */
  | { kind: 'binary'; data: string }
  /** `$disconnect`: the client has gone; the relay ends the session. */
  | { kind: 'disconnect' }
) & {
  /**
   * The client's order, from the connection's counter: `$default` invocations overlap, so the channel's
   * own order is the order they finished in, and the relay restores this one.
   */
  seq?: number;
};

export interface RealtimeChannel {
  /** Resolves once the channel takes messages. */
  create(connectionId: string): Promise<void>;
  /** `messageId` is unique per client message; a message sent twice with it is delivered once. */
  send(connectionId: string, message: ClientMessage, messageId: string): Promise<void>;
  /**
   * Waits (at most `waitMs` when given) for the next messages, in the order they were sent; an empty list
   * when the wait ran out.
   */
  receive(connectionId: string, signal: AbortSignal, waitMs?: number): Promise<ClientMessage[]>;
  remove(connectionId: string): Promise<void>;
}

/** Sending to a channel that no longer exists: its session has ended. */
export class ChannelGoneError extends Error {
  constructor(connectionId: string) {
    super(`no channel for connection ${connectionId}`);
    this.name = 'ChannelGoneError';
  }
}

const errorName = (error: unknown) => (error as { name?: string } | null)?.name;
const queueMissing = (error: unknown) =>
  errorName(error) === 'QueueDoesNotExist' || errorName(error) === 'AWS.SimpleQueueService.NonExistentQueue';

// SQS bodies allow only these characters; anything else travels base64-encoded.
const SQS_SAFE = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD]*$/u;
// SQS asks callers to wait about a second after CreateQueue before using the queue: `$connect` checks
// it answers for at most this long before accepting the connection.
const READY_ATTEMPTS = 12;
const READY_DELAY_MS = 100;
const READY_MAX_DELAY_MS = 500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type SqsModule = typeof import('@aws-sdk/client-sqs');

/** One FIFO queue per connection, named `<prefix><hex connection id>.fifo`. */
export class SqsRealtimeChannel implements RealtimeChannel {
  // Loaded on first use: the SDK comes from the Lambda runtime (lib/bundling.ts RUNTIME_PROVIDED).
  private loaded?: Promise<{ client: InstanceType<SqsModule['SQSClient']>; mod: SqsModule }>;

  constructor(
    /** `https://sqs.<region>.amazonaws.com/<account>/` */
    private readonly urlBase: string,
    /** Queue name prefix; IAM grants name exactly the queues that start with it. */
    private readonly prefix: string,
  ) {}

  private sqs() {
    this.loaded ??= import('@aws-sdk/client-sqs').then((mod) => ({
      client: new mod.SQSClient({ maxAttempts: 3 }),
      mod,
    }));
    return this.loaded;
  }

  queueName(connectionId: string): string {
    return `${this.prefix}${Buffer.from(connectionId).toString('hex')}.fifo`;
  }

  private url(connectionId: string): string {
    return `${this.urlBase.replace(/\/?$/, '/')}${this.queueName(connectionId)}`;
  }

  async create(connectionId: string): Promise<void> {
    const { client, mod } = await this.sqs();
    await client.send(
      new mod.CreateQueueCommand({
        QueueName: this.queueName(connectionId),
        Attributes: {
          FifoQueue: 'true',
          // Explicit ids: two identical audio chunks (silence) are two messages, not a duplicate.
          ContentBasedDeduplication: 'false',
          MessageRetentionPeriod: '3600',
          VisibilityTimeout: '30',
          ReceiveMessageWaitTimeSeconds: '20',
        },
      }),
    );
    const attributes = new mod.GetQueueAttributesCommand({
      QueueUrl: this.url(connectionId),
      AttributeNames: ['QueueArn'],
    });
    for (
      let attempt = 1, delay = READY_DELAY_MS;
      ;
      attempt++, delay = Math.min(delay * 2, READY_MAX_DELAY_MS)
    ) {
      try {
        await client.send(attributes);
        return;
      } catch (error) {
        if (!queueMissing(error) || attempt >= READY_ATTEMPTS) throw error;
        await sleep(delay);
      }
    }
  }

  async send(connectionId: string, message: ClientMessage, messageId: string): Promise<void> {
    const { client, mod } = await this.sqs();
    const text = message.kind === 'disconnect' ? '-' : message.data;
    const encoding = message.kind === 'text' && !SQS_SAFE.test(text) ? 'base64' : 'utf8';
    try {
      await client.send(
        new mod.SendMessageCommand({
          QueueUrl: this.url(connectionId),
          MessageBody: encoding === 'base64' ? Buffer.from(text).toString('base64') : text,
          // The queue serves one connection: one group keeps every message in order.
          MessageGroupId: 'client',
          MessageDeduplicationId: messageId
            .replace(/[^\w!"#$%&'()*+,./:;<=>?@[\\\]^`{|}~-]/g, '_')
            .slice(0, 128),
          MessageAttributes: {
            kind: { DataType: 'String', StringValue: message.kind },
            encoding: { DataType: 'String', StringValue: encoding },
            ...(message.seq !== undefined
              ? { seq: { DataType: 'Number', StringValue: String(message.seq) } }
              : {}),
          },
        }),
      );
    } catch (error) {
      if (queueMissing(error)) {
        throw new ChannelGoneError(connectionId);
      }
      throw error;
    }
  }

  async receive(connectionId: string, signal: AbortSignal, waitMs?: number): Promise<ClientMessage[]> {
    const { client, mod } = await this.sqs();
    const url = this.url(connectionId);
    let out: import('@aws-sdk/client-sqs').ReceiveMessageCommandOutput;
    try {
      out = await client.send(
        new mod.ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: 10,
          // A shorter wait rather than an abort: an aborted receive would hide its messages for 30 s.
          WaitTimeSeconds: waitMs === undefined ? 20 : Math.min(20, Math.max(0, Math.ceil(waitMs / 1000))),
          MessageAttributeNames: ['All'],
        }),
        { abortSignal: signal },
      );
    } catch (error) {
      if (signal.aborted) return [];
      if (queueMissing(error)) {
        throw new ChannelGoneError(connectionId);
      }
      throw error;
    }
    const messages = out.Messages ?? [];
    if (messages.length === 0) return [];
    // A FIFO group hands out nothing more until these are deleted: delete before relaying on.
    await client.send(
      new mod.DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
      }),
    );
    return messages.map((m): ClientMessage => {
      const kind = m.MessageAttributes?.kind?.StringValue;
      const body = m.Body ?? '';
      const given = m.MessageAttributes?.seq?.StringValue;
      const seq = given === undefined ? {} : { seq: Number(given) };
      if (kind === 'disconnect') return { kind: 'disconnect', ...seq };
      if (kind === 'binary') return { kind: 'binary', data: body, ...seq };
      const base64 = m.MessageAttributes?.encoding?.StringValue === 'base64';
      return { kind: 'text', data: base64 ? Buffer.from(body, 'base64').toString('utf8') : body, ...seq };
    });
  }

  async remove(connectionId: string): Promise<void> {
    const { client, mod } = await this.sqs();
    try {
      await client.send(new mod.DeleteQueueCommand({ QueueUrl: this.url(connectionId) }));
    } catch (error) {
      if (queueMissing(error)) return;
      throw error;
    }
  }
}

interface LocalQueue {
  messages: ClientMessage[];
  seen: Set<string>;
  waiter?: () => void;
}

/** The same contract in process memory, for the local runtime where the relay runs beside the server. */
export class LocalRealtimeChannel implements RealtimeChannel {
  private readonly queues = new Map<string, LocalQueue>();

  constructor(private readonly waitMs = 20_000) {}

  async create(connectionId: string): Promise<void> {
    if (!this.queues.has(connectionId)) this.queues.set(connectionId, { messages: [], seen: new Set() });
  }

  async send(connectionId: string, message: ClientMessage, messageId: string): Promise<void> {
    const queue = this.queues.get(connectionId);
    if (!queue) throw new ChannelGoneError(connectionId);
    if (queue.seen.has(messageId)) return;
    queue.seen.add(messageId);
    queue.messages.push(message);
    queue.waiter?.();
  }

  async receive(connectionId: string, signal: AbortSignal, waitMs?: number): Promise<ClientMessage[]> {
    const queue = this.queues.get(connectionId);
    if (!queue) throw new ChannelGoneError(connectionId);
    if (queue.messages.length === 0 && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          queue.waiter = undefined;
          resolve();
        };
        const timer = setTimeout(done, Math.min(waitMs ?? this.waitMs, this.waitMs));
        signal.addEventListener('abort', done, { once: true });
        queue.waiter = done;
      });
    }
    // Ten at most, as SQS hands them out.
    return queue.messages.splice(0, 10);
  }

  async remove(connectionId: string): Promise<void> {
    const queue = this.queues.get(connectionId);
    this.queues.delete(connectionId);
    queue?.waiter?.();
  }
}

let channel: RealtimeChannel | undefined;

/** SQS when the stack configured it, the in-process channel otherwise (one per process, shared). */
export function realtimeChannel(): RealtimeChannel {
  if (!channel) {
    const { realtimeQueueUrlBase, realtimeQueuePrefix } = settings();
    channel = realtimeQueueUrlBase
      ? new SqsRealtimeChannel(realtimeQueueUrlBase, realtimeQueuePrefix)
      : new LocalRealtimeChannel();
  }
  return channel;
}
