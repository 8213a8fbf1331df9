import { marshall, type NativeAttributeValue } from '@aws-sdk/util-dynamodb';

// Items to DynamoDB's wire shape, as `marshall` of `@aws-sdk/util-dynamodb` with `removeUndefinedValues`
// does, for the values the gateway writes: strings, safe numbers, booleans, null, plain objects and
// arrays. Anything else (sets, binary, NumberValue, bigint, special or unsafe numbers, an object whose
// `constructor` is not Object's) goes to the library itself, so results and errors stay the library's.
// Why: a log entry is about 60 values, and the library's generic checks (a constructor-name lookup and
// an array of special numbers built per value) were a third of the server's CPU for a log write.

const OPTIONS = { removeUndefinedValues: true, convertClassInstanceToMap: false };
// For one value: a map or a list comes back wrapped (`{M: ...}`), as any other attribute.
const VALUE_OPTIONS = { ...OPTIONS, convertTopLevelContainer: true };

type Attribute = Record<string, unknown>;

function toAttribute(value: unknown): Attribute {
  switch (typeof value) {
    case 'string':
      return { S: value };
    case 'number':
      if (value <= Number.MAX_SAFE_INTEGER && value >= Number.MIN_SAFE_INTEGER) return { N: String(value) };
      break;
    case 'boolean':
      return { BOOL: value };
    case 'object':
      if (value === null) return { NULL: true };
      if (Array.isArray(value)) {
        const list: Attribute[] = [];
        for (const item of value)
          if (item !== undefined && typeof item !== 'function') list.push(toAttribute(item));
        return { L: list };
      }
      if ((value as { constructor?: unknown }).constructor === Object) return { M: toMap(value as object) };
      break;
  }
  return marshall(value as NativeAttributeValue, VALUE_OPTIONS) as unknown as Attribute;
}

function toMap(value: object): Attribute {
  const map: Attribute = {};
  for (const key in value) {
    const member = (value as Record<string, unknown>)[key];
    if (member !== undefined && typeof member !== 'function') map[key] = toAttribute(member);
  }
  return map;
}

/** An item (or key) in DynamoDB's wire shape: `{name: {S: 'x'}, ...}`. */
export function marshallItem(item: Record<string, unknown>): Attribute {
  if ((item as { constructor?: unknown }).constructor === Object) return toMap(item);
  return marshall(item as Record<string, NativeAttributeValue>, OPTIONS) as Attribute;
}
