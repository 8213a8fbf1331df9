import { findWord } from '../linear-pattern';
import type { GuardrailCheck } from '../types';
import { noOtherFields, oneOf, optionalBoolean, stringList } from './param';

const OPERATORS = ['any', 'all', 'none'] as const;

// A word list is a list of words, not of documents: past this length a word is refused when saved.
const MAX_WORD_LENGTH = 1000;

interface Params {
  words: string[];
  caseSensitive: boolean;
  wholeWords: boolean;
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
    const words = stringList(params.words, problems, `${at}.words`);
    if (words.some((w) => w.length > MAX_WORD_LENGTH)) {
      problems.push(`${at}.words holds words of at most ${MAX_WORD_LENGTH} characters`);
    }
    return {
      words,
      caseSensitive,
      wholeWords,
      operator: oneOf(params.operator, OPERATORS, problems, `${at}.operator`, 'none'),
    };
  },
  run(text, { words, caseSensitive, wholeWords, operator }) {
    // Plain substring search, not a pattern: linear in the text whatever the words.
    const present = words.map((word) => ({
      word,
      findings: findWord(text, word, caseSensitive, wholeWords).map((s) => ({ ...s, label: 'WORD' })),
    }));
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
