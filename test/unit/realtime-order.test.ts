import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  QueueDoesNotExist,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientOrder } from '../../functions/gateway/realtime/client-order';
import type { ClientMessage } from '../../functions/store/realtime-channel';
import { SqsRealtimeChannel } from '../../functions/store/realtime-channel';

const text = (seq: number | undefined): ClientMessage =>
  seq === undefined ? { kind: 'text', data: 'plain' } : { kind: 'text', data: `m${seq}`, seq };
const data = (messages: ClientMessage[]) => messages.map((m) => (m.kind === 'disconnect' ? '-' : m.data));

function order(maxHeld = 8) {
  let now = 0;
  const skipped: Array<[number, number]> = [];
  const late: number[] = [];
  const o = new ClientOrder({
    gapWaitMs: 1_000,
    maxHeld,
    onSkip: (from, to) => skipped.push([from, to]),
    onLate: (seq) => late.push(seq),
    now: () => now,
  });
  return { o, skipped, late, advance: (ms: number) => (now += ms) };
}

describe('client order', () => {
  it('holds a message until the ones before it have arrived', () => {
    const { o } = order();
    expect(data(o.accept([text(3), text(2)]))).toEqual([]);
    expect(o.waitMs()).toBe(1_000);
    expect(data(o.accept([text(1)]))).toEqual(['m1', 'm2', 'm3']);
    expect(o.waitMs()).toBeUndefined();
    expect(data(o.accept([text(5), text(4)]))).toEqual(['m4', 'm5']);
  });

  it('gives up a gap after its wait, with a skip report, and still sends a late message', () => {
    const { o, skipped, late, advance } = order();
    o.accept([text(1), text(3), text(4)]);
    advance(400);
    expect(o.waitMs()).toBe(600);
    expect(o.expire()).toEqual([]);
    advance(600);
    expect(data(o.expire())).toEqual(['m3', 'm4']);
    expect(skipped).toEqual([[2, 2]]);
    expect(data(o.accept([text(2)]))).toEqual(['m2']);
    expect(late).toEqual([2]);
  });

  it('restarts the wait when an earlier gap fills and a later one remains', () => {
    const { o, advance } = order();
    o.accept([text(2), text(4)]);
    advance(900);
    expect(data(o.accept([text(1)]))).toEqual(['m1', 'm2']);
    expect(o.waitMs()).toBe(1_000);
  });

  it('gives up a gap at once when too many messages wait behind it', () => {
    const { o, skipped } = order(2);
    expect(data(o.accept([text(2), text(3)]))).toEqual([]);
    expect(data(o.accept([text(4)]))).toEqual(['m2', 'm3', 'm4']);
    expect(skipped).toEqual([[1, 1]]);
  });

  it('passes unnumbered messages on as they come', () => {
    const { o } = order();
    expect(data(o.accept([text(2), text(undefined)]))).toEqual(['plain']);
    expect(data(o.accept([{ kind: 'disconnect', seq: 1 }]))).toEqual(['-', 'm2']);
  });
});

describe('SQS channel readiness', () => {
  const sqs = mockClient(SQSClient);
  afterEach(() => sqs.reset());
  const missing = () => new QueueDoesNotExist({ message: 'not yet', $metadata: {} });

  it('returns from create only once the new queue answers', async () => {
    sqs.on(CreateQueueCommand).resolves({ QueueUrl: 'u' });
    sqs.on(GetQueueAttributesCommand).rejectsOnce(missing()).rejectsOnce(missing()).resolves({});
    const channel = new SqsRealtimeChannel('https://sqs.eu-west-1.amazonaws.com/123456789012/', 'p-');
    await channel.create('abc=');
    expect(sqs.commandCalls(CreateQueueCommand)).toHaveLength(1);
    expect(sqs.commandCalls(GetQueueAttributesCommand)).toHaveLength(3);
    expect(sqs.commandCalls(GetQueueAttributesCommand)[0]?.args[0].input.QueueUrl).toBe(
      `https://sqs.eu-west-1.amazonaws.com/123456789012/p-${Buffer.from('abc=').toString('hex')}.fifo`,
    );
  });

  it('fails create when the queue never answers, so $connect refuses the connection', async () => {
    sqs.on(CreateQueueCommand).resolves({ QueueUrl: 'u' });
    sqs.on(GetQueueAttributesCommand).rejects(missing());
    const channel = new SqsRealtimeChannel('https://sqs.eu-west-1.amazonaws.com/123456789012/', 'p-');
    await expect(channel.create('abc=')).rejects.toThrow('not yet');
    expect(sqs.commandCalls(GetQueueAttributesCommand)).toHaveLength(12);
    // Its bounded backoff runs about 5 s.
  }, 30_000);

  it('carries the sequence number through the queue', async () => {
    sqs.on(SendMessageCommand).resolves({});
    sqs.on(ReceiveMessageCommand).resolves({
      Messages: [
        {
          Body: 'hello',
          ReceiptHandle: 'r',
          MessageAttributes: {
            kind: { DataType: 'String', StringValue: 'text' },
            encoding: { DataType: 'String', StringValue: 'utf8' },
            seq: { DataType: 'Number', StringValue: '7' },
          },
        },
      ],
    });
    const channel = new SqsRealtimeChannel('https://sqs.eu-west-1.amazonaws.com/123456789012/', 'p-');
    await channel.send('abc=', { kind: 'text', data: 'hello', seq: 7 }, 'id-1');
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.MessageAttributes?.seq).toEqual({
      DataType: 'Number',
      StringValue: '7',
    });
    const received = await channel.receive('abc=', new AbortController().signal, 1_500);
    expect(received).toEqual([{ kind: 'text', data: 'hello', seq: 7 }]);
    expect(sqs.commandCalls(ReceiveMessageCommand)[0]?.args[0].input.WaitTimeSeconds).toBe(2);
  });
});
