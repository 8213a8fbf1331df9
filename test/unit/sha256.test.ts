import { Sha256 as SdkSha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { Sha256 } from '../../functions/core/sha256';

// The signers of DynamoDB and Bedrock calls hash with node:crypto directly; they must sign exactly as the
// SDK's hash does.

const request = {
  method: 'POST',
  protocol: 'https:',
  hostname: 'dynamodb.eu-west-1.amazonaws.com',
  path: '/',
  headers: { host: 'dynamodb.eu-west-1.amazonaws.com', 'x-amz-target': 'DynamoDB_20120810.GetItem' },
  body: '{"TableName":"t","Key":{"pk":{"S":"p"}}}',
};

function signer(sha256: typeof Sha256 | typeof SdkSha256) {
  return new SignatureV4({
    service: 'dynamodb',
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
    sha256,
  });
}

describe('the node:crypto SHA-256', () => {
  it('signs a request exactly as the SDK hash does', async () => {
    const signingDate = new Date('2026-01-02T03:04:05Z');
    const ours = await signer(Sha256).sign(request, { signingDate });
    const sdk = await signer(SdkSha256).sign(request, { signingDate });
    expect(ours.headers.authorization).toMatch(/Signature=[0-9a-f]{64}$/);
    expect(ours.headers).toEqual(sdk.headers);
  });

  it('hashes and keys known vectors, and may be read twice', async () => {
    const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
    const plain = new Sha256();
    plain.update(new TextEncoder().encode('abc'));
    const first = hex(await plain.digest());
    expect(first).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hex(await plain.digest())).toBe(first);
    // RFC 4231 test case 2.
    const keyed = new Sha256(new TextEncoder().encode('Jefe'));
    keyed.update(new TextEncoder().encode('what do ya want for nothing?'));
    expect(hex(await keyed.digest())).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });
});
