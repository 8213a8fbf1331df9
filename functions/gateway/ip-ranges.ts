import { isIP } from 'node:net';

// IP addresses parsed and classified without a library: the address guard's one question is which
// special-purpose range (IANA's registries) holds an address. The names and ranges are those of
// ipaddr.js 2.5, checked against it in test/unit/ip-ranges.test.ts; the first range that holds an
// address names it, and an address in none is `unicast`.

type Range = readonly [name: string, prefix: readonly number[], bits: number];

const V4_RANGES: readonly Range[] = [
  ['unspecified', [0, 0, 0, 0], 8],
  ['broadcast', [255, 255, 255, 255], 32],
  ['multicast', [224, 0, 0, 0], 4],
  ['linkLocal', [169, 254, 0, 0], 16],
  ['loopback', [127, 0, 0, 0], 8],
  ['carrierGradeNat', [100, 64, 0, 0], 10],
  ['private', [10, 0, 0, 0], 8],
  ['private', [172, 16, 0, 0], 12],
  ['private', [192, 168, 0, 0], 16],
  ['reserved', [192, 0, 0, 0], 24],
  ['reserved', [192, 0, 2, 0], 24],
  ['reserved', [192, 88, 99, 0], 24],
  ['reserved', [198, 18, 0, 0], 15],
  ['reserved', [198, 51, 100, 0], 24],
  ['reserved', [203, 0, 113, 0], 24],
  ['reserved', [240, 0, 0, 0], 4],
  ['as112', [192, 175, 48, 0], 24],
  ['as112', [192, 31, 196, 0], 24],
  ['amt', [192, 52, 193, 0], 24],
];

const V6_RANGES: readonly Range[] = [
  ['unspecified', [0, 0, 0, 0, 0, 0, 0, 0], 128],
  ['linkLocal', [0xfe80], 10],
  ['multicast', [0xff00], 8],
  ['loopback', [0, 0, 0, 0, 0, 0, 0, 1], 128],
  ['uniqueLocal', [0xfc00], 7],
  ['ipv4Mapped', [0, 0, 0, 0, 0, 0xffff], 96],
  ['deprecatedSiteLocal', [0xfec0], 10],
  ['discard', [0x100, 0, 0, 0], 64],
  ['rfc6145', [0, 0, 0, 0, 0xffff, 0], 96],
  ['rfc6052', [0x64, 0xff9b, 0, 0, 0, 0], 96],
  ['rfc6052', [0x64, 0xff9b, 0x1], 48],
  ['6to4', [0x2002], 16],
  ['teredo', [0x2001, 0], 32],
  ['benchmarking', [0x2001, 0x2, 0], 48],
  ['amt', [0x2001, 0x3], 32],
  ['as112v6', [0x2001, 0x4, 0x112], 48],
  ['as112v6', [0x2620, 0x4f, 0x8000], 48],
  ['deprecatedOrchid', [0x2001, 0x10], 28],
  ['orchid2', [0x2001, 0x20], 28],
  ['droneRemoteIdProtocolEntityTags', [0x2001, 0x30], 28],
  ['segmentRouting', [0x5f00], 16],
  ['reserved', [0x2001, 0], 23],
  ['reserved', [0x2001, 0xdb8], 32],
  ['reserved', [0x3fff], 20],
];

/** Whether the first `bits` bits of `parts` (each `width` bits wide) are those of `prefix`. */
function inRange(parts: readonly number[], prefix: readonly number[], bits: number, width: number): boolean {
  for (let i = 0; bits > 0; i++, bits -= width) {
    const shift = Math.max(0, width - bits);
    if ((parts[i] as number) >> shift !== (prefix[i] ?? 0) >> shift) return false;
  }
  return true;
}

function rangeOf(parts: readonly number[], ranges: readonly Range[], width: number): string {
  for (const [name, prefix, bits] of ranges) if (inRange(parts, prefix, bits, width)) return name;
  return 'unicast';
}

export type ParsedIp = { kind: 'ipv4'; octets: number[] } | { kind: 'ipv6'; parts: number[] };

function parseV4(text: string): number[] {
  return text.split('.').map(Number);
}

/** Eight 16-bit groups; `::` expanded, a trailing dotted quad folded into two groups, a zone id dropped. */
function parseV6(text: string): number[] {
  let s = text.toLowerCase();
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const lastColon = s.lastIndexOf(':');
  if (s.includes('.', lastColon)) {
    const [a, b, c, d] = parseV4(s.slice(lastColon + 1)) as [number, number, number, number];
    s = `${s.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const gap = s.indexOf('::');
  if (gap < 0) return groups(s);
  const head = groups(s.slice(0, gap));
  const tail = groups(s.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/** An IP address in any form `net.isIP` accepts, or undefined for anything else. */
export function parseIp(address: string): ParsedIp | undefined {
  const family = isIP(address);
  if (family === 4) return { kind: 'ipv4', octets: parseV4(address) };
  if (family === 6) return { kind: 'ipv6', parts: parseV6(address) };
  return undefined;
}

export function ipv4Range(octets: readonly number[]): string {
  return rangeOf(octets, V4_RANGES, 8);
}

export function ipv6Range(parts: readonly number[]): string {
  return rangeOf(parts, V6_RANGES, 16);
}
