import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { configureAddressGuard, guardedLookup } from '../../functions/gateway/address-guard';

// The system resolver (node:dns, loaded with the first name) answers the guard's lookups; this file never
// replaces it. `localhost` resolves from the hosts file, without a network.

const lookup = (host: string) =>
  new Promise<LookupAddress[]>((resolve, reject) =>
    guardedLookup(host, { all: true }, (err, addresses) =>
      err ? reject(err) : resolve(addresses as LookupAddress[]),
    ),
  );

describe('the address guard with the system resolver', () => {
  it('resolves a name, then judges what it resolves to', async () => {
    configureAddressGuard({ environment: { onAws: false, allowPrivate: true } });
    const addresses = await lookup('localhost');
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.every((a) => a.address === '127.0.0.1' || a.address === '::1')).toBe(true);
    configureAddressGuard({ environment: { onAws: true, allowPrivate: true } });
    await expect(lookup('localhost')).rejects.toThrow(/loopback/);
  });
});
