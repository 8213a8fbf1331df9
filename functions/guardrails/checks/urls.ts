import type { Finding, GuardrailCheck } from '../types';
import { noOtherFields, stringList } from './param';

interface Params {
  allowed: string[];
  denied: string[];
}

const URL_PATTERN = /\bhttps?:\/\/[^\s<>"'`)\]]+/gi;

const matchesDomain = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

/** URLs in the text must be on `allowed_domains` (when given) and never on `denied_domains`. */
export const urlsCheck: GuardrailCheck<Params> = {
  type: 'urls',
  redacts: true,
  parse(params, problems, at) {
    noOtherFields(params, ['allowed_domains', 'denied_domains'], problems, at);
    const allowed = stringList(params.allowed_domains, problems, `${at}.allowed_domains`, false).map((d) =>
      d.toLowerCase(),
    );
    const denied = stringList(params.denied_domains, problems, `${at}.denied_domains`, false).map((d) =>
      d.toLowerCase(),
    );
    if (allowed.length === 0 && denied.length === 0)
      problems.push(`${at} needs allowed_domains or denied_domains`);
    return { allowed, denied };
  },
  run(text, { allowed, denied }) {
    const findings: Finding[] = [];
    URL_PATTERN.lastIndex = 0;
    for (let m = URL_PATTERN.exec(text); m; m = URL_PATTERN.exec(text)) {
      let host = '';
      try {
        host = new URL(m[0]).hostname.toLowerCase();
      } catch {
        host = '';
      }
      const refused =
        denied.some((d) => matchesDomain(host, d)) ||
        (allowed.length > 0 && !allowed.some((d) => matchesDomain(host, d)));
      if (refused) findings.push({ start: m.index, end: m.index + m[0].length, label: 'URL' });
    }
    return findings.length === 0
      ? { passed: true }
      : { passed: false, message: `${findings.length} URL(s) not allowed`, findings };
  },
};
