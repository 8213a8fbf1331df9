import { describe, expect, it } from 'vitest';
import { hostMatches } from '../../functions/control/egress-settings';
import { credentialMasker, maskSecret, SecretMasker } from '../../functions/core/secret-mask';

const KEY = 'sk-proj-abcdefghijklmnopqrstuvwxyz012345';

describe('secret masking', () => {
  it('masks a credential whole, cut, or in pieces of 8 characters or more', () => {
    const masker = new SecretMasker([KEY]);
    expect(maskSecret(KEY)).toBe('sk-...2345');
    expect(masker.mask(`Incorrect API key provided: ${KEY}.`)).toBe(
      'Incorrect API key provided: sk-...2345.',
    );
    expect(masker.mask(`key ${KEY.slice(0, 12)}****${KEY.slice(-4)}`)).toBe('key sk-...2345****2345');
    expect(masker.mask(`middle ${KEY.slice(10, 18)} end`)).toBe('middle sk-...2345 end');
    // Seven characters say nothing usable about a key, and ordinary words stay readable.
    expect(masker.mask(`short ${KEY.slice(10, 17)}`)).toBe(`short ${KEY.slice(10, 17)}`);
    expect(masker.maskValue({ error: { message: KEY } })).toEqual({ error: { message: 'sk-...2345' } });
  });

  it('takes every credential a call used: the target credential, its JSON fields, and the auth headers', () => {
    const bedrock = JSON.stringify({
      access_key_id: 'AKIAEXAMPLEKEY123456',
      secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      region: 'us-east-1',
    });
    const masker = credentialMasker(bedrock, {
      authorization:
        'AWS4-HMAC-SHA256 Credential=AKIAEXAMPLEKEY123456/20250101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=0123456789abcdef0123456789abcdef',
      'x-goog-api-key': 'AIzaSyExampleGoogleKey000',
    });
    const text = masker.mask(
      'denied AKIAEXAMPLEKEY123456 wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY sig 0123456789abcdef0123456789abcdef AIzaSyExampleGoogleKey000 in us-east-1',
    );
    for (const secret of ['AKIAEXAMPLEKEY', 'wJalrXUtnFEMI', '0123456789abcdef', 'AIzaSyExample']) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('us-east-1');
  });
});

describe('egress host patterns', () => {
  it('match a host, a host and port, or any subdomain', () => {
    expect(hostMatches(new URL('https://api.example.com/v1'), 'api.example.com')).toBe(true);
    expect(hostMatches(new URL('https://api.example.com/v1'), 'api.example.com:443')).toBe(true);
    expect(hostMatches(new URL('http://api.example.com/v1'), 'api.example.com:443')).toBe(false);
    expect(hostMatches(new URL('https://a.b.example.com'), '*.example.com')).toBe(true);
    expect(hostMatches(new URL('https://example.com'), '*.example.com')).toBe(false);
    expect(hostMatches(new URL('https://evilexample.com'), '*.example.com')).toBe(false);
    expect(hostMatches(new URL('http://10.0.0.5:8000/v1'), '10.0.0.5:8000')).toBe(true);
    expect(hostMatches(new URL('http://10.0.0.5:8001/v1'), '10.0.0.5:8000')).toBe(false);
    expect(hostMatches(new URL('http://[::1]:8000/v1'), '[::1]:8000')).toBe(true);
  });
});
