import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import type { Checksum, SourceData } from '@smithy/types';

/**
 * SHA-256, or HMAC-SHA256 with a secret, on node:crypto: the hash SigV4 signers take. The SDK's own
 * (`@smithy/core/checksum`) probes node:crypto at import and carries a pure-JS fallback and CRC32.
 */
export class Sha256 implements Checksum {
  private hash: Hash | Hmac;

  constructor(private readonly secret?: SourceData) {
    this.hash = this.create();
  }

  update(data: Uint8Array): void {
    this.hash.update(data);
  }

  async digest(): Promise<Uint8Array> {
    // A plain hash may be read again or fed more: digest a copy. An HMAC is read once.
    const buf = 'copy' in this.hash ? this.hash.copy().digest() : this.hash.digest();
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  reset(): void {
    this.hash = this.create();
  }

  private create(): Hash | Hmac {
    const secret = this.secret;
    if (secret === undefined) return createHash('sha256');
    if (typeof secret === 'string') return createHmac('sha256', secret);
    const bytes = ArrayBuffer.isView(secret)
      ? Buffer.from(secret.buffer, secret.byteOffset, secret.byteLength)
      : Buffer.from(secret);
    return createHmac('sha256', bytes);
  }
}
