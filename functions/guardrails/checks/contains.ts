import type { GuardrailCheck } from '../types';
import { escapeRegExp, findAll, noOtherFields, oneOf, optionalBoolean, stringList } from './param';

const OPERATORS = ['any', 'all', 'none'] as const;

interface Params {
  words: Array<{ word: string; pattern: RegExp }>;
  operator: (typeof OPERATORS)[number];
}

/** Word lists: passes when `any` word is present, `all` are, or (`none`) none is. */
export const containsCheck: GuardrailCheck<Params> = {
  type: 'contains',
  redacts: true,
  parse(params, problems, at) {
    noOtherFields(params, ['words', 'operator', 'case_sensitive', 'whole_words'], problems, at);
    const caseSensitive = optionalBoolean(params.case_sensitive, problems, `${at}.case_sensitive`, false);
    const wholeWords = optionalBoolean(params.whole_words, problems, `${at}.whole_words`, true);
    const words = stringList(params.words, problems, `${at}.words`).map((word) => ({
      word,
      pattern: new RegExp(
        wholeWords ? `(?<![\\p{L}\\p{N}_])${escapeRegExp(word)}(?![\\p{L}\\p{N}_])` : escapeRegExp(word),
        `gu${caseSensitive ? '' : 'i'}`,
      ),
    }));
    return { words, operator: oneOf(params.operator, OPERATORS, problems, `${at}.operator`, 'none') };
  },
  run(text, { words, operator }) {
    const present = words.map((w) => ({ word: w.word, findings: findAll(w.pattern, text, 'WORD') }));
    const found = present.filter((p) => p.findings.length > 0);
    if (operator === 'none') {
      return found.length === 0
        ? { passed: true }
        : {
            passed: false,
            message: `${found.length} listed word(s) present`,
            findings: found.flatMap((p) => p.findings),
          };
    }
    if (operator === 'any')
      return found.length > 0
        ? { passed: true }
        : { passed: false, message: 'none of the listed words present' };
    const missing = present.length - found.length;
    return missing === 0 ? { passed: true } : { passed: false, message: `${missing} listed word(s) missing` };
  },
};
