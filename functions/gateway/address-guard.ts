import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { badRequest, type GatewayError } from '../core/errors';
import { logger } from '../core/logger';
import { type Settings, settings } from '../core/settings';
import { ipv4Range, ipv6Range, parseIp } from './ip-ranges';

// Every outbound connection the gateway makes for a request or a setting (provider calls, custom hosts,
// realtime sockets, JWKS URLs, the pricing URL, moderation, webhooks) goes through here. The check runs on
// the address a name resolves to, at connect time, so a name that resolves (or rebinds) to the metadata
// service or a private network is caught however the URL spelled it.

/** Where outbound connections may go. */
export interface EgressEnvironment {
  /** Lambda or a container on AWS: loopback is the Lambda runtime API, link-local the metadata service. */
  onAws: boolean;
  /** Private ranges (RFC 1918, unique-local, CGNAT) may be reached; locally also loopback. */
  allowPrivate: boolean;
}

type Resolver = (hostname: string, callback: (err: Error | null, addresses: LookupAddress[]) => void) => void;

// node:dns is loaded with the first name to resolve, not at import: upstreams given by IP never need it.
let dns: Promise<typeof import('node:dns')> | undefined;

const systemResolver: Resolver = (hostname, callback) => {
  dns ??= import('node:dns');
  dns.then(
    ({ lookup }) => lookup(hostname, { all: true }, (err, addresses) => callback(err, addresses ?? [])),
    (error: Error) => callback(error, []),
  );
};

/**
 * The rules the settings give: `GATEWAY_ALLOW_PRIVATE_HOSTS` is set by CDK context on AWS, where private
 * hosts are refused unless it is `true`; elsewhere they are allowed unless it is `false`. The local runtime
 * (`GATEWAY_LOCAL=1`) keeps its local rules wherever it runs.
 */
export function egressFrom(
  { onAws, allowPrivateHosts }: Pick<Settings, 'onAws' | 'allowPrivateHosts'> = settings(),
): EgressEnvironment {
  return { onAws, allowPrivate: onAws ? allowPrivateHosts === true : allowPrivateHosts !== false };
}

let environment = egressFrom();
let resolver: Resolver = systemResolver;

/** Replaces the environment or the DNS resolver: the local server and tests (a resolver stub, no network). */
export function configureAddressGuard(options: {
  environment?: EgressEnvironment;
  resolver?: Resolver;
}): void {
  if (options.environment) environment = options.environment;
  if (options.resolver) resolver = options.resolver;
}

export function egressEnvironment(): EgressEnvironment {
  return environment;
}

/** An address the guard refuses, with the reason for the log and the client. */
export class RefusedAddressError extends Error {
  readonly code = 'EHOSTNOTALLOWED';
  constructor(
    readonly host: string,
    readonly reason: string,
  ) {
    super(`${host} is not allowed: ${reason}`);
    this.name = 'RefusedAddressError';
  }
}

// IPv4 ranges never reachable, wherever the gateway runs.
const V4_BLOCKED = new Set(['unspecified', 'broadcast', 'multicast', 'linkLocal', 'reserved']);
// IPv4 ranges reachable only where private hosts are allowed.
const V4_PRIVATE = new Set(['private', 'carrierGradeNat']);
// fd00:ec2::254, the IPv6 address of the EC2 instance metadata service.
const EC2_METADATA_V6 = [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254];

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any, dotted. */
function embeddedV4(p: readonly number[]): string | undefined {
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  // ::a.b.c.d (compatible), ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (SIIT); :: and ::1 are not addresses of hosts.
  if (zeros(0, 5) && (p[5] === 0 || p[5] === 0xffff) && !(p[5] === 0 && p[6] === 0))
    return v4(p[6] as number, p[7] as number);
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return v4(p[6] as number, p[7] as number);
  // NAT64: the well-known prefix 64:ff9b::/96 and the local-use 64:ff9b:1::/48.
  if (p[0] === 0x64 && p[1] === 0xff9b) return v4(p[6] as number, p[7] as number);
  // 6to4: 2002:AABB:CCDD::/48 reaches AA.BB.CC.DD.
  if (p[0] === 0x2002) return v4(p[1] as number, p[2] as number);
  return undefined;
}

/** Why an address is refused in this environment, or null when it may be reached. */
export function refusalReason(address: string, env: EgressEnvironment = environment): string | null {
  const parsed = parseIp(address);
  if (!parsed) return `${address} is not an IP address`;
  if (parsed.kind === 'ipv6') {
    const inner = embeddedV4(parsed.parts);
    if (inner) {
      const why = refusalReason(inner, env);
      return why && `${address} carries the IPv4 address ${inner}: ${why}`;
    }
    if (parsed.parts.every((part, i) => part === EC2_METADATA_V6[i]))
      return `${address} is the EC2 instance metadata service`;
    const range = ipv6Range(parsed.parts);
    if (range === 'loopback') return loopbackReason(address, env);
    if (range === 'uniqueLocal')
      return env.allowPrivate ? null : `${address} is a unique-local (private) address`;
    if (range === 'unicast') return null;
    return `${address} is in the ${range} range`;
  }
  const range = ipv4Range(parsed.octets);
  if (range === 'loopback') return loopbackReason(address, env);
  if (V4_PRIVATE.has(range)) return env.allowPrivate ? null : `${address} is a private address`;
  if (V4_BLOCKED.has(range)) return `${address} is in the ${range} range`;
  return null;
}

// On AWS loopback is the Lambda runtime API (127.0.0.1:9001): refused even where private hosts are allowed.
function loopbackReason(address: string, env: EgressEnvironment): string | null {
  if (env.onAws) return `${address} is a loopback address`;
  return env.allowPrivate ? null : `${address} is a loopback address`;
}

/** A DNS lookup for agents and sockets: it resolves, then refuses the name if any address is refused. */
export function guardedLookup(
  hostname: string,
  options: object,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void {
  const done = (list: LookupAddress[]) => {
    if ((options as { all?: boolean }).all) return callback(null, list);
    const first = list[0] as LookupAddress;
    callback(null, first.address, first.family);
  };
  if (isIP(hostname)) {
    const reason = refusalReason(hostname);
    if (reason) callback(refused(hostname, reason), []);
    else done([{ address: hostname, family: isIP(hostname) }]);
    return;
  }
  resolver(hostname, (err, addresses) => {
    if (err) return callback(err, []);
    if (addresses.length === 0)
      return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
    // Every address is checked: a name with one public and one private address is refused.
    for (const { address } of addresses) {
      const reason = refusalReason(address);
      if (reason) return callback(refused(hostname, `it resolves to ${reason}`), []);
    }
    done(addresses);
  });
}

function refused(host: string, reason: string): RefusedAddressError {
  logger.warn('outbound connection refused', { host, reason });
  return new RefusedAddressError(host, reason);
}

/**
 * Checks what can be checked before connecting: the scheme, and a host that is an IP literal (the URL
 * parser has already turned decimal, octal, hex and mapped spellings into one form). Throws a 400.
 */
export function checkOutboundUrl(url: URL, param: string | null = null): void {
  if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) {
    throw badRequest('The outbound URL must be http or https.', param, 'invalid_host');
  }
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal)) {
    const reason = refusalReason(literal);
    if (reason) throw hostNotAllowed(refused(literal, reason), param);
  }
}

/** The 400 a refused address answers; nothing has been sent. */
export function hostNotAllowed(error: RefusedAddressError, param: string | null = null): GatewayError {
  return badRequest(`The host ${error.message}.`, param, 'host_not_allowed');
}

/**
 * Keep-alive pools, one per origin (an agent keys its sockets by host and port), whose every connection
 * goes through the guard's lookup. Node's client sends one request at a time on a socket: HTTP/1.1
 * pipelining is never used. undici measured barely faster on loopback and would add 520 KB to each bundle.
 */
const POOL: http.AgentOptions = {
  keepAlive: true,
  keepAliveMsecs: 10_000,
  // The most recently used socket goes out first, so the spare ones go idle and are closed.
  scheduling: 'lifo',
  // Per origin: a bound on sockets to one provider under a burst; more requests wait for a socket.
  maxSockets: 1024,
  // Idle sockets kept per origin; one freed beyond this is closed.
  maxFreeSockets: 64,
  // An idle socket is closed after this (a server's shorter `Keep-Alive: timeout` wins), before a load
  // balancer drops it silently and a reused socket fails. A request in flight is not affected.
  timeout: 30_000,
  lookup: guardedLookup,
};

export const guardedAgents = {
  'http:': new http.Agent(POOL),
  'https:': new https.Agent(POOL),
};

export interface GuardedReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A small fetch for settings and webhooks (JWKS, pricing, alerts): one request through the guard, no
 * redirects, a deadline for the whole exchange and a cap on the reply. A refused host rejects with
 * RefusedAddressError before any byte is sent.
 */
export function guardedFetch(
  url: string | URL,
  init: {
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    timeoutMs: number;
    maxBytes: number;
  },
): Promise<GuardedReply> {
  const target = typeof url === 'string' ? new URL(url) : url;
  return new Promise((resolve, reject) => {
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    const reason = isIP(literal) ? refusalReason(literal) : null;
    if (reason) return reject(refused(literal, reason));
    const agent = guardedAgents[target.protocol as 'http:' | 'https:'];
    if (!agent) return reject(new Error(`unsupported protocol ${target.protocol}`));
    const transport = target.protocol === 'https:' ? https : http;
    const headers = { ...init.headers };
    if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
    const req = transport.request(target, { method: init.method ?? 'GET', headers, agent });
    const timer = setTimeout(() => req.destroy(new Error('timed out')), init.timeoutMs);
    timer.unref();
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > init.maxBytes) req.destroy(new Error(`reply larger than ${init.maxBytes} bytes`));
        else parts.push(chunk);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) });
      });
      res.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    req.end(init.body);
  });
}
