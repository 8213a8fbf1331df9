import { LinearPattern, loadLinearPatterns } from '../linear-pattern';
import type { GuardrailCheck } from '../types';
import { noOtherFields, optionalBoolean } from './param';

interface Params {
  pattern: LinearPattern;
  mustMatch: boolean;
}

/**
 * Fails when the pattern matches (or, with `must_match`, when it does not). The pattern runs on RE2,
 * in time linear in the text: look-around and back-references are refused when the check is saved.
 */
export const regexCheck: GuardrailCheck<Params> = {
  type: 'regex',
  redacts: true,
  load: loadLinearPatterns,
  parse(params, problems, at) {
    noOtherFields(params, ['pattern', 'flags', 'must_match'], problems, at);
    const flags = params.flags === undefined ? 'i' : params.flags;
    // Never run: a check with problems is refused. It matches nothing.
    let pattern = LinearPattern.compile('$^');
    if (typeof params.pattern !== 'string' || params.pattern === '' || params.pattern.length > 1000) {
      problems.push(`${at}.pattern must be a regular expression of 1 to 1000 characters`);
    } else if (typeof flags !== 'string' || !/^[imsu]*$/.test(flags)) {
      problems.push(`${at}.flags may hold only i, m, s and u`);
    } else {
      try {
        pattern = LinearPattern.compile(params.pattern, flags);
      } catch (error) {
        problems.push(
          `${at}.pattern is not a valid regular expression for the linear-time (RE2) engine, which has no look-around or back-references: ${(error as Error).message}`,
        );
      }
    }
    return { pattern, mustMatch: optionalBoolean(params.must_match, problems, `${at}.must_match`, false) };
  },
  run(text, { pattern, mustMatch }) {
    if (mustMatch)
      return pattern.test(text) ? { passed: true } : { passed: false, message: 'required pattern not found' };
    const findings = pattern.spans(text).map((s) => ({ ...s, label: 'MATCH' }));
    return findings.length === 0
      ? { passed: true }
      : { passed: false, message: `pattern matched ${findings.length} time(s)`, findings };
  },
};
