import type { GuardrailCheck } from '../types';
import { findAll, noOtherFields, optionalBoolean } from './param';

interface Params {
  pattern: RegExp;
  mustMatch: boolean;
}

/** Fails when the pattern matches (or, with `must_match`, when it does not). */
export const regexCheck: GuardrailCheck<Params> = {
  type: 'regex',
  redacts: true,
  parse(params, problems, at) {
    noOtherFields(params, ['pattern', 'flags', 'must_match'], problems, at);
    const flags = params.flags ?? 'i';
    let pattern = /$^/g;
    if (typeof params.pattern !== 'string' || params.pattern === '' || params.pattern.length > 1000) {
      problems.push(`${at}.pattern must be a regular expression of 1 to 1000 characters`);
    } else if (typeof flags !== 'string' || !/^[imsu]*$/.test(flags)) {
      problems.push(`${at}.flags may hold only i, m, s and u`);
    } else {
      try {
        pattern = new RegExp(params.pattern, `${flags}g`);
      } catch (error) {
        problems.push(`${at}.pattern is not a valid regular expression: ${(error as Error).message}`);
      }
    }
    return { pattern, mustMatch: optionalBoolean(params.must_match, problems, `${at}.must_match`, false) };
  },
  run(text, { pattern, mustMatch }) {
    const findings = findAll(pattern, text, 'MATCH');
    if (mustMatch)
      return findings.length > 0
        ? { passed: true }
        : { passed: false, message: 'required pattern not found' };
    return findings.length === 0
      ? { passed: true }
      : { passed: false, message: `pattern matched ${findings.length} time(s)`, findings };
  },
};
