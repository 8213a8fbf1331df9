import type { RE2JS } from 're2js';

// Patterns that come from callers run on RE2 (a pure-JS port: no native binary in the Lambda bundle).
// RE2 takes time linear in the text whatever the pattern, so no pattern can stall the event loop; in
// exchange it has no look-around and no back-references, and such a pattern is refused when saved.

// RE2 is a third of the chat bundle: it is imported when a config first names a regex check.
let engine: typeof RE2JS | undefined;

/** Loads RE2 once; `LinearPattern.compile` needs it (the regex check's `load`). */
export async function loadLinearPatterns(): Promise<void> {
  engine ??= (await import('re2js')).RE2JS;
}

function re2(): typeof RE2JS {
  if (!engine) throw new Error('RE2 is not loaded: prepareChecks must run before a regex check is compiled');
  return engine;
}

// RE2 always matches by code point; `u` changes nothing.
const FLAG_NAMES = { i: 'CASE_INSENSITIVE', m: 'MULTILINE', s: 'DOTALL' } as const;

export interface Span {
  start: number;
  end: number;
}

export class LinearPattern {
  private constructor(private readonly re: RE2JS) {}

  /** Compiles a pattern in JavaScript syntax with JS flags (i, m, s, u); throws when RE2 cannot run it. */
  static compile(source: string, flags = ''): LinearPattern {
    const RE2 = re2();
    let bits = 0;
    for (const flag of flags) {
      const name = FLAG_NAMES[flag as keyof typeof FLAG_NAMES];
      if (name) bits |= RE2[name];
    }
    return new LinearPattern(RE2.compile(source, bits));
  }

  /** Every non-empty, non-overlapping match, left to right, as UTF-16 offsets into `text`. */
  spans(text: string): Span[] {
    const found: Span[] = [];
    // Whether anything matches is a DFA pass, several times faster than finding where: most texts stop here.
    if (!this.re.test(text)) return found;
    const matcher = this.re.matcher(text);
    while (matcher.find()) {
      const start = matcher.start();
      const end = matcher.end();
      if (end > start) found.push({ start, end });
    }
    return found;
  }

  test(text: string): boolean {
    return this.re.test(text);
  }
}

const WORD_CHAR = /[\p{L}\p{N}_]/u;

function wordCharBefore(text: string, index: number): boolean {
  if (index <= 0) return false;
  const low = text.charCodeAt(index - 1);
  const pair = low >= 0xdc00 && low <= 0xdfff && index >= 2;
  return WORD_CHAR.test(text.slice(pair ? index - 2 : index - 1, index));
}

function wordCharAt(text: string, index: number): boolean {
  if (index >= text.length) return false;
  const cp = text.codePointAt(index) as number;
  return WORD_CHAR.test(String.fromCodePoint(cp));
}

/**
 * Every occurrence of a literal word: a plain substring search, no regular expression, so linear in
 * the text for words of bounded length. Case-insensitive by lower-casing both sides, when that keeps
 * every offset in place (it does for all text but a few special letters, which fall back to a literal
 * RegExp: with nothing but literal characters it has nothing to backtrack over).
 */
export function findWord(text: string, word: string, caseSensitive: boolean, wholeWords: boolean): Span[] {
  let haystack = text;
  let needle = word;
  if (!caseSensitive) {
    haystack = text.toLowerCase();
    needle = word.toLowerCase();
    if (haystack.length !== text.length || needle.length !== word.length) {
      return literalFallback(text, word, wholeWords);
    }
  }
  const found: Span[] = [];
  if (needle === '') return found;
  for (let at = haystack.indexOf(needle); at !== -1; ) {
    const end = at + needle.length;
    if (!wholeWords || (!wordCharBefore(text, at) && !wordCharAt(text, end))) {
      found.push({ start: at, end });
      at = haystack.indexOf(needle, end);
    } else at = haystack.indexOf(needle, at + 1);
  }
  return found;
}

function literalFallback(text: string, word: string, wholeWords: boolean): Span[] {
  const literal = new RegExp(word.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&'), 'giu');
  const spans: Span[] = [];
  for (const m of text.matchAll(literal)) spans.push({ start: m.index, end: m.index + m[0].length });
  return wholeWords ? spans.filter((s) => !wordCharBefore(text, s.start) && !wordCharAt(text, s.end)) : spans;
}
