import type { LookupAddress } from 'node:dns';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSettings } from '../../functions/core/settings';
import {
  checkOutboundUrl,
  configureAddressGuard,
  egressFrom,
  guardedFetch,
  guardedLookup,
  RefusedAddressError,
  refusalReason,
} from '../../functions/gateway/address-guard';

const LOCAL = { onAws: false, allowPrivate: true };
const LOCAL_STRICT = { onAws: false, allowPrivate: false };
const AWS = { onAws: true, allowPrivate: false };
const AWS_PRIVATE = { onAws: true, allowPrivate: true };

/** The host a URL parser makes of a spelling: the form the guard sees. */
const hostOf = (url: string) => new URL(url).hostname.replace(/^\[|\]$/g, '');

// Spellings of the instance metadata service and other never-reachable addresses.
const ALWAYS_REFUSED = [
  'http://169.254.169.254/',
  'http://2852039166/',
  'http://0251.0376.0251.0376/',
  'http://0xa9fea9fe/',
  'http://0xA9.0xFE.0xA9.0xFE/',
  'http://169.254.43518/',
  'http://[::ffff:169.254.169.254]/',
  'http://[::ffff:a9fe:a9fe]/',
  'http://[::169.254.169.254]/',
  'http://[::a9fe:a9fe]/',
  'http://[::ffff:0:a9fe:a9fe]/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://[64:ff9b::169.254.169.254]/',
  'http://[64:ff9b:1::a9fe:a9fe]/',
  'http://[2002:a9fe:a9fe::1]/',
  'http://[fd00:ec2::254]/',
  'http://[fe80::1]/',
  'http://0.0.0.0/',
  'http://0/',
  'http://0.1.2.3/',
  'http://224.0.0.1/',
  'http://255.255.255.255/',
  'http://240.0.0.1/',
  'http://[ff02::1]/',
  'http://[::]/',
];
const PRIVATE = [
  'http://10.0.0.5/',
  'http://172.16.3.4/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://0x0a000005/',
  'http://[::ffff:10.0.0.5]/',
  'http://[::ffff:a00:5]/',
  'http://[64:ff9b::a00:5]/',
  'http://[fc00::1]/',
  'http://[fd12:3456::1]/',
];
const LOOPBACK = [
  'http://127.0.0.1/',
  'http://2130706433/',
  'http://0x7f.1/',
  'http://[::1]/',
  'http://[::ffff:7f00:1]/',
];
const PUBLIC = [
  'https://1.1.1.1/',
  'http://8.8.8.8/',
  'http://[2606:4700::1111]/',
  'http://[::ffff:8.8.8.8]/',
];

describe('address guard', () => {
  afterEach(() => configureAddressGuard({ environment: LOCAL }));

  it.each(ALWAYS_REFUSED)('refuses %s everywhere', (url) => {
    for (const env of [LOCAL, LOCAL_STRICT, AWS, AWS_PRIVATE])
      expect(refusalReason(hostOf(url), env)).not.toBeNull();
  });

  it.each(PRIVATE)('refuses the private %s on AWS and when private hosts are off', (url) => {
    expect(refusalReason(hostOf(url), AWS)).not.toBeNull();
    expect(refusalReason(hostOf(url), LOCAL_STRICT)).not.toBeNull();
    expect(refusalReason(hostOf(url), LOCAL)).toBeNull();
    expect(refusalReason(hostOf(url), AWS_PRIVATE)).toBeNull();
  });

  it.each(LOOPBACK)('refuses the loopback %s on AWS even with private hosts allowed', (url) => {
    expect(refusalReason(hostOf(url), AWS)).toMatch(/loopback/);
    expect(refusalReason(hostOf(url), AWS_PRIVATE)).toMatch(/loopback/);
    expect(refusalReason(hostOf(url), LOCAL_STRICT)).toMatch(/loopback/);
    expect(refusalReason(hostOf(url), LOCAL)).toBeNull();
  });

  it.each(PUBLIC)('lets the public %s through', (url) => {
    for (const env of [LOCAL, LOCAL_STRICT, AWS]) expect(refusalReason(hostOf(url), env)).toBeNull();
  });

  it('reads Lambda and containers as AWS, and the private-hosts switch', () => {
    expect(egressFrom(parseSettings({}))).toEqual({ onAws: false, allowPrivate: true });
    expect(egressFrom(parseSettings({ GATEWAY_ALLOW_PRIVATE_HOSTS: 'false' }))).toEqual({
      onAws: false,
      allowPrivate: false,
    });
    expect(egressFrom(parseSettings({ AWS_LAMBDA_FUNCTION_NAME: 'gw-chat' }))).toEqual({
      onAws: true,
      allowPrivate: false,
    });
    expect(egressFrom(parseSettings({ ECS_CONTAINER_METADATA_URI_V4: 'http://x' }))).toEqual({
      onAws: true,
      allowPrivate: false,
    });
    expect(
      egressFrom(parseSettings({ ECS_CONTAINER_METADATA_URI_V4: 'http://x', GATEWAY_LOCAL: '1' })),
    ).toEqual({
      onAws: false,
      allowPrivate: true,
    });
    expect(
      egressFrom(parseSettings({ AWS_LAMBDA_FUNCTION_NAME: 'f', GATEWAY_ALLOW_PRIVATE_HOSTS: 'true' })),
    ).toEqual({
      onAws: true,
      allowPrivate: true,
    });
  });

  it('checks IP literals before connecting, with a 400 host_not_allowed', () => {
    expect(() => checkOutboundUrl(new URL('http://2852039166/latest'), 'x-gateway-custom-host')).toThrow(
      expect.objectContaining({ status: 400, code: 'host_not_allowed', param: 'x-gateway-custom-host' }),
    );
    expect(() => checkOutboundUrl(new URL('file:///etc/passwd'))).toThrow(
      expect.objectContaining({ code: 'invalid_host' }),
    );
  });

  it('checks every address a name resolves to, at lookup time', async () => {
    const answers: Record<string, LookupAddress[]> = {
      'rebind.test': [
        { address: '93.184.216.34', family: 4 },
        { address: '::ffff:a9fe:a9fe', family: 6 },
      ],
      'public.test': [{ address: '93.184.216.34', family: 4 }],
    };
    configureAddressGuard({ environment: AWS, resolver: (host, cb) => cb(null, answers[host] ?? []) });
    const lookup = (host: string, all: boolean) =>
      new Promise<unknown>((resolve, reject) =>
        guardedLookup(host, { all }, (err, address) => (err ? reject(err) : resolve(address))),
      );
    await expect(lookup('rebind.test', false)).rejects.toBeInstanceOf(RefusedAddressError);
    await expect(lookup('rebind.test', false)).rejects.toThrow(/169\.254\.169\.254/);
    await expect(lookup('public.test', false)).resolves.toBe('93.184.216.34');
    await expect(lookup('public.test', true)).resolves.toEqual(answers['public.test']);
    await expect(lookup('nowhere.test', false)).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('guards the fetch used for settings and webhooks before a byte is sent', async () => {
    configureAddressGuard({
      environment: AWS,
      resolver: (_host, cb) => cb(null, [{ address: '10.1.2.3', family: 4 }]),
    });
    await expect(
      guardedFetch('https://jwks.internal.test/keys', { timeoutMs: 1000, maxBytes: 10 }),
    ).rejects.toBeInstanceOf(RefusedAddressError);
    await expect(
      guardedFetch('http://[fd00:ec2::254]/', { timeoutMs: 1000, maxBytes: 10 }),
    ).rejects.toBeInstanceOf(RefusedAddressError);
  });
});
