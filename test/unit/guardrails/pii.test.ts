import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { digitCount, findEmails, ibanValid, luhnValid } from '../../../functions/guardrails/checks/pii';
import { runChecks } from '../../../functions/guardrails/engine';
import { compileOne, problemsOf, verdict } from './helpers';

const labelsIn = async (text: string, kinds?: string[]) =>
  (await verdict({ type: 'pii', ...(kinds ? { kinds } : {}) }, text)).message ?? '';

describe('pii check', () => {
  it('finds emails', async () =>
    expect(await labelsIn('mail jane.doe+x@example.co.uk now')).toContain('EMAIL'));
  it('takes into a local part exactly the ASCII characters an address may hold there', () => {
    for (let code = 0; code < 128; code++) {
      const ch = String.fromCharCode(code);
      if (ch === '@') continue;
      const may = /[A-Za-z0-9._%+-]/.test(ch);
      expect(findEmails(`x${ch}y@example.com`), `code ${code}`).toEqual([{ start: may ? 0 : 2, end: 15 }]);
    }
    expect(findEmails('mail jöran@example.se')).toEqual([{ start: 5, end: 21 }]);
  });
  it('finds phone numbers of common forms', async () => {
    expect(await labelsIn('call +44 20 7946 0958')).toContain('PHONE');
    expect(await labelsIn('call (555) 123-4567')).toContain('PHONE');
    expect(await labelsIn('it is 2026-11-20 today', ['phone'])).toBe('');
    expect(await labelsIn('order 12345', ['phone'])).toBe('');
  });
  it('finds card numbers only when the Luhn check passes', async () => {
    expect(await labelsIn('card 4111 1111 1111 1111', ['credit_card'])).toContain('CREDIT_CARD');
    expect(await labelsIn('card 4111 1111 1111 1112', ['credit_card'])).toBe('');
    expect(luhnValid('79927398713')).toBe(true);
    expect(await labelsIn('card 4111-1111-1111-1111', ['credit_card'])).toContain('CREDIT_CARD');
  });
  it("reads a candidate's digits in place, separators skipped, as if they were copied out first", () => {
    const candidate = fc.stringMatching(/^[0-9 -]{0,40}$/);
    fc.assert(
      fc.property(candidate, (text) => {
        const copied = text.replace(/\D/g, '');
        expect(digitCount(text)).toBe(copied.length);
        expect(luhnValid(text)).toBe(luhnValid(copied));
      }),
    );
    // The reference: the Luhn check of the digits alone, doubling every second digit from the right.
    const reference = (digits: string) =>
      [...digits].reverse().reduce((sum, ch, i) => {
        const d = Number(ch) * (i % 2 === 1 ? 2 : 1);
        return sum + (d > 9 ? d - 9 : d);
      }, 0) %
        10 ===
      0;
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{1,19}$/), (digits) => {
        expect(luhnValid(digits)).toBe(reference(digits));
        expect(luhnValid(digits.split('').join(' '))).toBe(reference(digits));
      }),
    );
  });
  it('finds IBANs only when the mod-97 check passes', async () => {
    expect(await labelsIn('pay GB82 WEST 1234 5698 7654 32', ['iban'])).toContain('IBAN');
    expect(await labelsIn('pay GB82 WEST 1234 5698 7654 33', ['iban'])).toBe('');
    expect(ibanValid('DE89370400440532013000')).toBe(true);
  });
  it('finds IPv4 and IPv6 addresses, not version numbers', async () => {
    expect(await labelsIn('host 192.168.10.254', ['ip_address'])).toContain('IP_ADDRESS');
    expect(await labelsIn('host 2001:db8::8a2e:370:7334', ['ip_address'])).toContain('IP_ADDRESS');
    expect(await labelsIn('version 1.2.3', ['ip_address'])).toBe('');
    expect(await labelsIn('not 999.1.1.1', ['ip_address'])).toBe('');
  });
  it('finds national ids: US SSN, UK NINO, Spanish DNI', async () => {
    expect(await labelsIn('ssn 123-45-6789', ['us_ssn'])).toContain('US_SSN');
    expect(await labelsIn('ssn 000-45-6789', ['us_ssn'])).toBe('');
    expect(await labelsIn('nino AB 12 34 56 C', ['uk_nino'])).toContain('UK_NINO');
    expect(await labelsIn('nino QQ 12 34 56 C', ['uk_nino'])).toBe('');
    expect(await labelsIn('dni 12345678Z', ['es_dni'])).toContain('ES_DNI');
    expect(await labelsIn('dni 12345678A', ['es_dni'])).toBe('');
  });

  it('redacts each finding in place', async () => {
    const report = await runChecks(
      [compileOne({ type: 'pii', action: 'redact' })],
      ['Email a@b.io or call +1 415 555 0100.'],
      { direction: 'input' },
    );
    expect(report.segments[0]).toBe('Email [REDACTED_EMAIL] or call [REDACTED_PHONE].');
    expect(report.passed).toBe(true);
    expect(report.redacted).toBe(true);
  });

  it('rejects unknown kinds', () => {
    expect(problemsOf({ type: 'pii', kinds: ['dna'] }).join()).toContain('dna');
  });
});
