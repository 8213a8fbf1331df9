import { describe, expect, it } from 'vitest';
import { problemsOf, verdict } from './helpers';

describe('urls check', () => {
  it('refuses URLs on denied domains, subdomains included', async () => {
    const config = { type: 'urls', denied_domains: ['evil.example'] };
    expect((await verdict(config, 'see https://cdn.evil.example/x.js')).passed).toBe(false);
    expect((await verdict(config, 'see https://notevil.example/x')).passed).toBe(true);
  });

  it('with allowed_domains, refuses every other URL', async () => {
    const config = { type: 'urls', allowed_domains: ['docs.example.com'] };
    expect((await verdict(config, 'read https://docs.example.com/a and http://other.org')).findings).toBe(1);
    expect((await verdict(config, 'no links at all')).passed).toBe(true);
  });

  it('needs a domain list', () => {
    expect(problemsOf({ type: 'urls' }).join()).toContain('allowed_domains or denied_domains');
  });
});
