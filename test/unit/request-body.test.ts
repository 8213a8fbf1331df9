import { describe, expect, it } from 'vitest';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../../functions/core/request-body';

describe('jsonTooDeep', () => {
  const deep = (n: number, inner = '1') => `${'['.repeat(n)}${inner}${']'.repeat(n)}`;

  it('counts brackets outside strings only, whatever the strings hold', () => {
    const tricky = JSON.stringify(['[[[[', '\\', '\\"{{{', 'a\\\\', '"]]]"', '{'.repeat(200)]);
    expect(jsonTooDeep(deep(MAX_JSON_DEPTH - 1, tricky))).toBe(false);
    expect(jsonTooDeep(deep(MAX_JSON_DEPTH, tricky))).toBe(true);
  });

  it('ends a string at a quote after an even run of backslashes', () => {
    // "\\" is a whole string: the brackets after it are structure.
    expect(jsonTooDeep(`["\\\\",${deep(MAX_JSON_DEPTH)}]`)).toBe(true);
    // "\\\"[[..." never closes: everything after the escaped quote is inside it.
    expect(jsonTooDeep(`["\\\\\\"${'['.repeat(100)}`)).toBe(false);
  });

  it('reads an unterminated string as text to the end', () => {
    expect(jsonTooDeep(`{"a":"${'['.repeat(100)}`)).toBe(false);
  });
});
