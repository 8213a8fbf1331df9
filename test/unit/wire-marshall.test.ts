import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { marshallItem } from '../../functions/store/wire-marshall';

// The store's marshaller must answer exactly as the library's `marshall` with `removeUndefinedValues`:
// the same wire item for every value, and the same error where the library refuses one.
const LIBRARY = { removeUndefinedValues: true, convertClassInstanceToMap: false };

function outcome(run: () => unknown): unknown {
  try {
    return { value: run() };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function same(item: Record<string, unknown>): void {
  expect(outcome(() => marshallItem(item))).toEqual(outcome(() => marshall(item as never, LIBRARY)));
}

class Instance {
  a = 1;
}

// Values the library treats apart: sets, binary, NumberValue, bigint, special and unsafe numbers,
// class instances, objects without a prototype, functions and undefined (dropped), a key named `constructor`.
const unusual = fc.constantFrom<unknown>(
  new Set(['a', 'b']),
  new Set([1, 2]),
  new Set<string>(),
  new Set([undefined, 'x']),
  new Uint8Array([1, 2]),
  Buffer.from('hi'),
  NumberValue.from('12345678901234567890'),
  12n,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  Number.MAX_SAFE_INTEGER + 2,
  -Number.MAX_SAFE_INTEGER - 2,
  -0,
  new Instance(),
  Object.assign(Object.create(null) as object, { x: 1, y: 'z' }),
  () => 1,
  undefined,
  { constructor: 'x' },
  new Map([['k', 1]]),
  new Date(0),
);

const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    unusual,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 4 }),
  ),
}));

describe('wire marshalling', () => {
  it('answers as the library for any item, results and errors alike', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 8 }), value, { maxKeys: 6 }), (item) => same(item)),
      { numRuns: 2000 },
    );
  });

  it('answers as the library for each unusual value, alone, in a list and in a map', () => {
    fc.assert(
      fc.property(unusual, (v) => {
        same({ v });
        same({ list: [1, v, 'x'] });
        same({ map: { a: v, b: [v] } });
      }),
    );
  });

  it('writes a log-shaped item with the types DynamoDB expects', () => {
    expect(
      marshallItem({
        pk: 'o#w#1',
        status: 200,
        cost: 0.000012,
        cached: false,
        user: null,
        usage: { prompt_tokens: 3 },
        tags: ['a'],
        gone: undefined,
      }),
    ).toEqual({
      pk: { S: 'o#w#1' },
      status: { N: '200' },
      cost: { N: '0.000012' },
      cached: { BOOL: false },
      user: { NULL: true },
      usage: { M: { prompt_tokens: { N: '3' } } },
      tags: { L: [{ S: 'a' }] },
    });
  });
});
