import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { ipv4Range, ipv6Range, parseIp } from '../../functions/gateway/ip-ranges';

// The address guard classifies addresses itself; ipaddr.js (what it used before) is the oracle here.

// Prefixes of every special range, so that random addresses land in each of them often.
const V4_STARTS = [0, 10, 100, 127, 169, 172, 192, 198, 203, 224, 240, 255];
const V6_STARTS = [
  0, 0x64, 0x100, 0x2001, 0x2002, 0x2620, 0x3fff, 0x5f00, 0xfc00, 0xfd00, 0xfe80, 0xfec0, 0xff00,
];

const octet = fc.integer({ min: 0, max: 255 });
const group = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 0, max: 0xffff }),
  fc.constantFrom(0xffff, 0xff9b, 0x112),
);
const v4 = fc.tuple(fc.oneof(fc.constantFrom(...V4_STARTS), octet), octet, octet, octet);
const v6 = fc.tuple(
  fc.oneof(fc.constantFrom(...V6_STARTS), group),
  ...Array.from({ length: 7 }, () => group),
);

describe('IP ranges without a library', () => {
  it('names the range of any IPv4 address as ipaddr.js does', () => {
    fc.assert(
      fc.property(v4, (octets) => {
        const text = octets.join('.');
        const parsed = parseIp(text);
        expect(parsed).toEqual({ kind: 'ipv4', octets });
        expect(ipv4Range(octets)).toBe(ipaddr.IPv4.parse(text).range());
      }),
      { numRuns: 5000 },
    );
  });

  it('parses every spelling of an IPv6 address and names its range as ipaddr.js does', () => {
    fc.assert(
      fc.property(v6, octet, (tuple, zoneSeed) => {
        const parts = tuple as number[];
        const [g6, g7] = [parts[6] as number, parts[7] as number];
        const oracle = new ipaddr.IPv6(parts);
        const spellings = [
          oracle.toString(),
          oracle.toNormalizedString(),
          parts.map((p) => p.toString(16).padStart(4, '0').toUpperCase()).join(':'),
          new URL(`http://[${oracle.toString()}]/`).hostname.slice(1, -1),
          `${parts
            .slice(0, 6)
            .map((p) => p.toString(16))
            .join(':')}:${g6 >> 8}.${g6 & 0xff}.${g7 >> 8}.${g7 & 0xff}`,
          `${oracle.toString()}%eth${zoneSeed}`,
        ];
        for (const text of spellings) {
          const parsed = parseIp(text);
          expect(parsed, text).toEqual({ kind: 'ipv6', parts });
        }
        expect(ipv6Range(parts)).toBe(oracle.range());
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses what is not an address', () => {
    for (const text of ['', 'localhost', '0x7f.1', '1.2.3', '::g', '1.2.3.4.5'])
      expect(parseIp(text)).toBeUndefined();
  });
});
