// Small readers for check parameters: each records a problem instead of throwing, so a config error
// lists every bad field at once.

export function stringList(value: unknown, problems: string[], at: string, required = true): string[] {
  if (value === undefined && !required) return [];
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v !== '')) {
    problems.push(`${at} must be a non-empty array of non-empty strings`);
    return [];
  }
  return value as string[];
}

export function optionalCount(value: unknown, problems: string[], at: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || (value as number) < 0) {
    problems.push(`${at} must be a whole number of 0 or more`);
    return undefined;
  }
  return value as number;
}

export function optionalBoolean(value: unknown, problems: string[], at: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') {
    problems.push(`${at} must be true or false`);
    return fallback;
  }
  return value;
}

export function oneOf<T extends string>(
  value: unknown,
  allowed: readonly T[],
  problems: string[],
  at: string,
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    problems.push(`${at} must be one of ${allowed.map((a) => `"${a}"`).join(', ')}`);
    return fallback;
  }
  return value as T;
}

export function noOtherFields(
  params: Record<string, unknown>,
  known: string[],
  problems: string[],
  at: string,
): void {
  for (const key of Object.keys(params)) {
    if (!known.includes(key)) problems.push(`${at}.${key} is not a parameter of this check`);
  }
}

/** Every match of a global regular expression, as findings. */
export function findAll(
  pattern: RegExp,
  text: string,
  label: string,
): Array<{ start: number; end: number; label: string }> {
  const found = [];
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
    if (m[0] === '') {
      pattern.lastIndex++;
      continue;
    }
    found.push({ start: m.index, end: m.index + m[0].length, label });
  }
  return found;
}

/** A literal string as a regular expression source. */
export const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
