import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { cacheParses } from '../../local/expression-cache.mjs';

// The embedded DynamoDB parses each expression shape once (local/expression-cache.mjs): a cached parse
// must give exactly the tree, the errors and the side effects of dynalite's own parse.

const require = createRequire(import.meta.url);
type Parse = (expression: string, options: { context: Context }) => unknown;
interface Context {
  attrNames?: Record<string, string>;
  attrVals?: Record<string, Record<string, unknown>>;
  unusedAttrNames: Record<string, boolean>;
  unusedAttrVals: Record<string, boolean>;
  isKeyCondition?: boolean;
  isReserved: (name: string) => boolean;
  compare: unknown;
}
const validations = require('dynalite/validations') as { isReserved?: (name: string) => boolean };
const db = require('dynalite/db') as { compare: unknown };
const reserved = new Set(['STATUS', 'VALUE', 'COUNT', 'NAME', 'DATA']);
const isReserved = validations.isReserved ?? ((name: string) => reserved.has(name.toUpperCase()));

const PARSERS = {
  update: require('dynalite/db/updateParser') as { parse: Parse },
  condition: require('dynalite/db/conditionParser') as { parse: Parse },
  projection: require('dynalite/db/projectionParser') as { parse: Parse },
};

function context(
  names: Record<string, string> | undefined,
  values: Record<string, Record<string, unknown>> | undefined,
  isKeyCondition = false,
): Context {
  return {
    attrNames: names,
    attrVals: values,
    unusedAttrNames: Object.fromEntries(Object.keys(names ?? {}).map((k) => [k, true])),
    unusedAttrVals: Object.fromEntries(Object.keys(values ?? {}).map((k) => [k, true])),
    isKeyCondition,
    isReserved,
    compare: db.compare,
  };
}

/** Parses with dynalite's parser and with a cached copy of it, and answers both outcomes. */
function both(
  parser: keyof typeof PARSERS,
  cached: { parse: Parse },
  expression: string,
  make: () => Context,
) {
  const run = (parse: Parse) => {
    const ctx = make();
    let result: unknown;
    try {
      result = parse(expression, { context: ctx });
    } catch (error) {
      result = { thrown: (error as Error).message };
    }
    return { result, unusedNames: ctx.unusedAttrNames, unusedValues: ctx.unusedAttrVals };
  };
  return { fresh: run(PARSERS[parser].parse), cached: run(cached.parse) };
}

const CASES: Array<{
  parser: keyof typeof PARSERS;
  expression: string;
  calls: Array<[Record<string, string> | undefined, Record<string, Record<string, unknown>> | undefined]>;
  key?: boolean;
}> = [
  {
    parser: 'update',
    expression: 'ADD held :usd SET #r = :entry',
    calls: [
      [{ '#r': 'R#one' }, { ':usd': { N: '0.5' }, ':entry': { M: { usd: { N: '0.5' } } } }],
      [
        { '#r': 'R#two' },
        { ':usd': { N: '0.25' }, ':entry': { M: { usd: { N: '0.25' }, exp: { N: '9' } } } },
      ],
      // Another value type is another shape: dynalite's own error.
      [{ '#r': 'R#three' }, { ':usd': { S: 'x' }, ':entry': { S: 'y' } }],
      // Two placeholders for one attribute overlap: the error, not a cached tree.
      [{ '#r': 'held' }, { ':usd': { N: '1' }, ':entry': { N: '1' } }],
    ],
  },
  {
    parser: 'update',
    expression: 'REMOVE #r ADD held :delta, spent :usd',
    calls: [
      [{ '#r': 'R#a' }, { ':delta': { N: '-1' }, ':usd': { N: '0.9' } }],
      [{ '#r': 'R#b' }, { ':delta': { N: '-2' }, ':usd': { N: '1.9' } }],
      // A value declared and not used stays unused.
      [{ '#r': 'R#c' }, { ':delta': { N: '-2' }, ':usd': { N: '1.9' }, ':extra': { N: '1' } }],
    ],
  },
  {
    parser: 'update',
    expression: 'SET #a = :x, #b = :y',
    calls: [
      [
        { '#a': 'one', '#b': 'two' },
        { ':x': { S: '1' }, ':y': { S: '2' } },
      ],
      [
        { '#a': 'three', '#b': 'four' },
        { ':x': { S: '3' }, ':y': { S: '4' } },
      ],
      [
        { '#a': 'same', '#b': 'same' },
        { ':x': { S: '3' }, ':y': { S: '4' } },
      ],
    ],
  },
  {
    parser: 'condition',
    expression: 'attribute_not_exists(#count) OR #count <= :room',
    calls: [
      [{ '#count': 'requests' }, { ':room': { N: '10' } }],
      [{ '#count': 'tokens' }, { ':room': { N: '99' } }],
      [{ '#count': 'tokens' }, undefined],
    ],
  },
  {
    parser: 'condition',
    expression: 'attribute_exists(pk) AND #status <> :closed',
    calls: [
      [{ '#status': 'status' }, { ':closed': { S: 'closed' } }],
      [{ '#status': 'state' }, { ':closed': { S: 'done' } }],
    ],
  },
  {
    parser: 'condition',
    expression: 'pk = :pk AND begins_with(sk, :prefix)',
    key: true,
    calls: [
      [undefined, { ':pk': { S: 'VK#1' }, ':prefix': { S: 'SPEND#' } }],
      [undefined, { ':pk': { S: 'VK#2' }, ':prefix': { S: 'RATE#' } }],
      [undefined, { ':pk': { S: 'VK#2' }, ':prefix': { N: '1' } }],
    ],
  },
  {
    parser: 'condition',
    expression: 'pk = :pk AND sk BETWEEN :low AND :high',
    key: true,
    calls: [
      [undefined, { ':pk': { S: 'a' }, ':low': { S: 'a' }, ':high': { S: 'b' } }],
      [undefined, { ':pk': { S: 'a' }, ':low': { S: 'b' }, ':high': { S: 'a' } }],
    ],
  },
  {
    parser: 'projection',
    expression: '#a, sk, #b.c',
    calls: [
      [{ '#a': 'pk', '#b': 'm' }, undefined],
      [{ '#a': 'other', '#b': 'n' }, undefined],
    ],
  },
];

describe('the embedded DynamoDB parses each expression shape once', () => {
  for (const { parser, expression, calls, key } of CASES) {
    it(`gives dynalite's own outcome for ${parser} expression "${expression}"`, () => {
      const cached = cacheParses({ parse: PARSERS[parser].parse });
      // Each call twice: the first of a shape fills the cache, the second is answered from it.
      for (const [names, values] of [...calls, ...calls]) {
        const { fresh, cached: fromCache } = both(parser, cached, expression, () =>
          context(names, values, key),
        );
        expect(fromCache).toEqual(fresh);
      }
    });
  }

  it('copies the tree: what the action does to one call does not reach the next', () => {
    const cached = cacheParses({ parse: PARSERS.update.parse });
    const values = { ':usd': { N: '1' }, ':entry': { N: '2' } };
    const first = cached.parse('ADD held :usd SET #r = :entry', {
      context: context({ '#r': 'R#1' }, values),
    }) as { paths: unknown[][] };
    const second = cached.parse('ADD held :usd SET #r = :entry', {
      context: context({ '#r': 'R#2' }, values),
    }) as { paths: unknown[][] };
    first.paths.length = 0;
    const third = cached.parse('ADD held :usd SET #r = :entry', {
      context: context({ '#r': 'R#3' }, values),
    }) as { paths: unknown[][] };
    expect(second.paths).toEqual([['held'], ['R#2']]);
    expect(third.paths).toEqual([['held'], ['R#3']]);
  });
});
