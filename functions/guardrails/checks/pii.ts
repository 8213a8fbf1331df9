import { isIP } from 'node:net';
import type { Finding, GuardrailCheck } from '../types';
import { noOtherFields } from './param';

// Each kind: a candidate pattern, then a validator that drops look-alikes (a card number must pass the
// Luhn check, an IBAN its mod-97 check), so that ordinary numbers are not taken for personal data.
// Every pattern is linear in the text: repetitions that could overlap are bounded, and emails are found
// from their `@` outwards rather than by a pattern that would retry every start of a long word.

interface Kind {
  label: string;
  pattern: RegExp;
  /** Finds candidates itself, where no backtracking pattern can do it in linear time. */
  find?: (text: string) => Array<{ start: number; end: number }>;
  valid?: (match: string) => boolean;
}

const LOCAL_PART = /[\p{L}\p{N}._%+-]/u;
/** Which ASCII characters a local part holds, by code: a table, not a regex test per character. */
const ASCII_LOCAL = new Uint8Array(128).map((_, code) => Number(LOCAL_PART.test(String.fromCharCode(code))));

/** Whether a dot comes before the next space or `@`: a domain needs one, and most `@` in odd text lack it. */
function dotBeforeBreak(text: string, from: number): boolean {
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x2e) return true;
    if (code === 0x40 || code <= 0x20) return false;
  }
  return false;
}

/** Whether the code point ending just before `end` may be in a local part (ASCII without a regex). */
function localCharBefore(text: string, end: number, floor: number): number {
  const code = text.charCodeAt(end - 1);
  if (code < 0x80) return ASCII_LOCAL[code] as number;
  const width = code >= 0xdc00 && code <= 0xdfff && end - 2 >= floor ? 2 : 1;
  return LOCAL_PART.test(text.slice(end - width, end)) ? width : 0;
}
// From just after the `@`: labels, then a dot and a top-level domain of letters.
const DOMAIN = /[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/uy;

/**
 * Emails, found from each `@`: the local part is walked back to the previous `@` at most, the domain
 * matched forward up to the next character no domain holds; each character is read a bounded number of
 * times, so the whole is linear however the text is made.
 */
export function findEmails(text: string): Array<{ start: number; end: number }> {
  const found: Array<{ start: number; end: number }> = [];
  let floor = 0;
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > floor) {
      const width = localCharBefore(text, start, floor);
      if (width === 0) break;
      start -= width;
    }
    floor = at + 1;
    if (start === at || !dotBeforeBreak(text, at + 1)) continue;
    DOMAIN.lastIndex = at + 1;
    const domain = DOMAIN.exec(text);
    if (!domain) continue;
    const end = DOMAIN.lastIndex;
    found.push({ start, end });
    floor = end;
    at = end - 1;
  }
  return found;
}

// Candidates are read in place, without copying their digits out: a 1 MB run of digits and spaces makes
// tens of thousands of candidates, and copying each (`replace(/\D/g, '')`) took four fifths of the check.

/** How many ASCII digits the text holds. */
export function digitCount(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 48 && code <= 57) n++;
  }
  return n;
}

/** The Luhn check over the text's digits; separators (spaces, dashes) are skipped. */
export function luhnValid(number: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = number.length - 1; i >= 0; i--) {
    let d = number.charCodeAt(i) - 48;
    if (d < 0 || d > 9) continue;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

export function ibanValid(candidate: string): boolean {
  const iban = candidate.replace(/\s+/g, '').toUpperCase();
  if (iban.length < 15 || iban.length > 34) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const code = ch.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : ch;
    for (const d of value) remainder = (remainder * 10 + (d.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';

export const PII_KINDS: Record<string, Kind> = {
  email: { label: 'EMAIL', pattern: /$^/g, find: findEmails },
  phone: {
    label: 'PHONE',
    // At most 15 digits with their separators: bounded, so a long run of digits and spaces stays linear.
    pattern: /(?<![\w+])\+?\(?\d[\d\s().-]{6,30}\d(?!\w)/g,
    valid: (m) => {
      const n = digitCount(m);
      return n >= 8 && n <= 15 && !/^\d{4}-\d{2}-\d{2}$/.test(m.trim());
    },
  },
  credit_card: {
    label: 'CREDIT_CARD',
    pattern: /(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)/g,
    valid: (m) => {
      const n = digitCount(m);
      return n >= 13 && n <= 19 && luhnValid(m);
    },
  },
  iban: { label: 'IBAN', pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g, valid: ibanValid },
  ip_address: {
    label: 'IP_ADDRESS',
    pattern: /(?<![\w.:])(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7})(?![\w.:])/gi,
    valid: (m) => isIP(m) !== 0,
  },
  us_ssn: { label: 'US_SSN', pattern: /\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b/g },
  uk_nino: {
    label: 'UK_NINO',
    pattern: /\b(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/gi,
  },
  es_dni: {
    label: 'ES_DNI',
    pattern: /\b\d{8}-?[A-Z]\b/gi,
    valid: (m) => DNI_LETTERS[Number(m.slice(0, 8)) % 23] === m.slice(-1).toUpperCase(),
  },
};

export function findPii(text: string, kinds: Kind[]): Finding[] {
  const findings: Finding[] = [];
  for (const kind of kinds) {
    if (kind.find) {
      for (const span of kind.find(text)) findings.push({ ...span, label: kind.label });
      continue;
    }
    kind.pattern.lastIndex = 0;
    for (let m = kind.pattern.exec(text); m; m = kind.pattern.exec(text)) {
      if (kind.valid && !kind.valid(m[0])) continue;
      findings.push({ start: m.index, end: m.index + m[0].length, label: kind.label });
    }
  }
  // Overlaps (a card number that also looks like a phone) keep the earliest, longest span.
  findings.sort((a, b) => a.start - b.start || b.end - a.end);
  return findings.filter((f, i) => i === 0 || f.start >= (findings[i - 1] as Finding).end);
}

export const piiCheck: GuardrailCheck<{ kinds: Kind[] }> = {
  type: 'pii',
  redacts: true,
  parse(params, problems, at) {
    noOtherFields(params, ['kinds'], problems, at);
    if (params.kinds === undefined) return { kinds: Object.values(PII_KINDS) };
    const names = params.kinds;
    if (!Array.isArray(names) || names.length === 0) {
      problems.push(`${at}.kinds must be a non-empty array of: ${Object.keys(PII_KINDS).join(', ')}`);
      return { kinds: [] };
    }
    const unknown = names.filter((n) => typeof n !== 'string' || !Object.hasOwn(PII_KINDS, n));
    if (unknown.length > 0) problems.push(`${at}.kinds has unknown kinds: ${unknown.map(String).join(', ')}`);
    return {
      kinds: names
        .filter((n): n is string => typeof n === 'string' && Object.hasOwn(PII_KINDS, n))
        .map((n) => PII_KINDS[n] as Kind),
    };
  },
  run(text, { kinds }) {
    const findings = findPii(text, kinds);
    if (findings.length === 0) return { passed: true };
    const labels = [...new Set(findings.map((f) => f.label))];
    return { passed: false, message: `found ${labels.join(', ')}`, findings };
  },
};
