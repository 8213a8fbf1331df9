// One base URL for SDKs: a CloudFront distribution in front of every function URL, one cache behaviour
// per path pattern of operations.ts. Nothing is cached, every method is allowed, streamed replies pass
// through as they are produced, and the function URLs refuse any request without the origin secret. The
// realtime WebSocket API gets one behaviour of its own, so `wss://<domain>/v1/realtime` works too.
import {
  aws_certificatemanager as acm,
  aws_cloudfront as cloudfront,
  Duration,
  type aws_lambda as lambda,
  aws_cloudfront_origins as origins,
  type aws_s3 as s3,
  Token,
  Validations,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { FunctionGroupName, Operation } from '../functions/core/operations';
import { ORIGIN_SECRET_HEADER } from '../functions/middleware/request-context';
import { realtimeRewriteCode } from './realtime-rewrite';

export { ORIGIN_SECRET_HEADER };

/** CloudFront's default maximum origin read timeout; more needs a service quota increase. */
export const DEFAULT_ORIGIN_READ_TIMEOUT_SECONDS = 60;
export const MAX_ORIGIN_READ_TIMEOUT_SECONDS = 180;

export interface DistributionRoute {
  /** A CloudFront path pattern: `{name}` segments of operations.ts become `*`. */
  pathPattern: string;
  group: FunctionGroupName;
}

const literalPrefix = (pattern: string) => pattern.split('*')[0] ?? '';

/**
 * The cache behaviours: for each operation outside the default group, the broadest path prefix (`/v1/audio/*`,
 * `/v1/files*`) under which every operation belongs to the same function, so the distribution stays well
 * inside CloudFront's quota of cache behaviours (25 by default) as operations are added. Most specific
 * first (CloudFront takes the first pattern that matches). Two groups claiming the same path is a mistake in
 * operations.ts, reported here rather than routed at random.
 */
export function distributionRoutes(
  operations: readonly Pick<Operation, 'path' | 'group'>[],
  defaultGroup: FunctionGroupName,
): DistributionRoute[] {
  const sample = (path: string) => path.replace(/\{\w+\}/g, 'x');
  const owners = new Map<string, FunctionGroupName>();
  for (const op of operations) {
    const claimed = owners.get(sample(op.path));
    if (claimed && claimed !== op.group) {
      throw new Error(`path ${op.path} is served by both ${claimed} and ${op.group}`);
    }
    owners.set(sample(op.path), op.group);
  }
  const onlyGroup = (pattern: string, group: FunctionGroupName) =>
    [...owners].every(([path, owner]) => owner === group || !matchesPathPattern(pattern, path));

  const byPattern = new Map<string, FunctionGroupName>();
  for (const op of operations) {
    if (op.group === defaultGroup) continue;
    const parts = op.path.split('/').filter(Boolean);
    // Never broader than `/v1/<name>`: `/v1*` would take every path from the default function.
    const shortest = parts[0] === 'v1' ? 2 : 1;
    let pattern = op.path.replace(/\{\w+\}/g, '*');
    for (let n = shortest; n <= parts.length; n++) {
      const prefix = `/${parts.slice(0, n).join('/')}`;
      if (prefix.includes('{')) break;
      const candidate = n < parts.length ? `${prefix}/*` : `${prefix}*`;
      if (onlyGroup(candidate, op.group)) {
        pattern = candidate;
        break;
      }
    }
    byPattern.set(pattern, op.group);
  }
  return (
    [...byPattern]
      .map(([pathPattern, group]) => ({ pathPattern, group }))
      // A pattern that a broader one of the same function covers needs no behaviour of its own.
      .filter(
        (r, _i, all) =>
          !all.some(
            (q) =>
              q !== r &&
              q.group === r.group &&
              matchesPathPattern(q.pathPattern, r.pathPattern.replace(/\*/g, 'x')),
          ),
      )
      .sort(
        (a, b) =>
          literalPrefix(b.pathPattern).length - literalPrefix(a.pathPattern).length ||
          a.pathPattern.localeCompare(b.pathPattern),
      )
  );
}

/** Whether a CloudFront path pattern (`*` any characters, `?` one) matches a path. */
export function matchesPathPattern(pattern: string, path: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`).test(path);
}

export interface GatewayDistributionProps {
  functionUrls: Record<FunctionGroupName, lambda.IFunctionUrl>;
  operations: readonly Pick<Operation, 'path' | 'group'>[];
  /** Serves every path no behaviour names (its router answers unknown paths with a 404). */
  defaultGroup: FunctionGroupName;
  /** The origin secret's value: a token resolved by CloudFormation at deploy time. */
  originSecret: string;
  readTimeoutSeconds: number;
  /** The realtime WebSocket API, served at `path` on the distribution. */
  realtime?: RealtimeOrigin;
  /** ARN of a CLOUDFRONT-scope WAF WebACL (created in us-east-1) that filters every request. */
  webAclArn?: string;
  /** A custom domain served with `certificateArn` (an ACM certificate in us-east-1), TLS 1.2 or newer. */
  customDomain?: { domainName: string; certificateArn: string };
  /** Receives CloudFront's standard access logs; its ACLs must be enabled (CloudFront writes with them). */
  logBucket?: s3.IBucket;
}

/** Viewer TLS policy with a custom domain: TLS 1.2 or newer, with forward-secret ciphers only. */
export const CUSTOM_DOMAIN_SECURITY_POLICY = cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021;

export interface RealtimeOrigin {
  /** The public path clients connect to (`/v1/realtime`); a CloudFront path pattern without wildcards. */
  path: string;
  /** The WebSocket API's execute-api host name, without scheme or path. */
  domainName: string;
  /** The stage's path (`/v1`): the only path API Gateway accepts a WebSocket handshake on. */
  stagePath: string;
}

export class GatewayDistribution extends Construct {
  readonly distribution: cloudfront.Distribution;
  readonly routes: DistributionRoute[];
  /** The viewer-request function that maps the realtime path to the stage path, if realtime is served. */
  readonly realtimeRewrite?: cloudfront.Function;

  constructor(scope: Construct, id: string, props: GatewayDistributionProps) {
    super(scope, id);
    const { readTimeoutSeconds } = props;
    if (
      !Number.isInteger(readTimeoutSeconds) ||
      readTimeoutSeconds < 1 ||
      readTimeoutSeconds > MAX_ORIGIN_READ_TIMEOUT_SECONDS
    ) {
      throw new Error(
        `the origin read timeout must be an integer from 1 to ${MAX_ORIGIN_READ_TIMEOUT_SECONDS} seconds, got ${readTimeoutSeconds}`,
      );
    }
    const originOf = new Map<FunctionGroupName, cloudfront.IOrigin>();
    const origin = (group: FunctionGroupName) => {
      let o = originOf.get(group);
      if (!o) {
        o = new origins.FunctionUrlOrigin(props.functionUrls[group], {
          // Time allowed before the first byte and between two chunks: a slow non-streamed reply needs it.
          readTimeout: Duration.seconds(readTimeoutSeconds),
          customHeaders: { [ORIGIN_SECRET_HEADER]: props.originSecret },
        });
        originOf.set(group, o);
      }
      return o;
    };
    const behaviour = (group: FunctionGroupName): cloudfront.BehaviorOptions => ({
      origin: origin(group),
      viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
      allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
      cachedMethods: cloudfront.CachedMethods.CACHE_GET_HEAD,
      // No caching, and compression off: Accept-Encoding is then neither in a cache key nor added by
      // CloudFront, and function URLs strip Content-Encoding anyway.
      cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
      // Every viewer header (the gateway key, Authorization, x-gateway-*), query string and cookie,
      // except Host, which must name the function URL for Lambda to route the request.
      originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      compress: false,
    });
    this.routes = distributionRoutes(props.operations, props.defaultGroup);
    const additionalBehaviors: Record<string, cloudfront.BehaviorOptions> = {};
    if (props.realtime) {
      const { path } = props.realtime;
      if (/[*?]/.test(path)) throw new Error(`the realtime path must be a plain path, got ${path}`);
      // Its behaviour comes first, so an HTTP operation at the same path would never be reached.
      const taken = props.operations.find((op) => matchesPathPattern(op.path.replace(/\{\w+\}/g, '*'), path));
      if (taken) throw new Error(`the realtime path ${path} is also the HTTP path ${taken.path}`);
      this.realtimeRewrite = new cloudfront.Function(this, 'RealtimeRewrite', {
        comment: `Maps ${path} to the WebSocket API's stage path`,
        runtime: cloudfront.FunctionRuntime.JS_2_0,
        code: cloudfront.FunctionCode.fromInline(realtimeRewriteCode(path, props.realtime.stagePath)),
      });
      // First in the list: CloudFront takes the first pattern that matches, and a later operation under
      // `/v1/realtime/...` could otherwise produce a broader pattern (`/v1/realtime*`) that takes it.
      additionalBehaviors[path] = {
        origin: new origins.HttpOrigin(props.realtime.domainName, {
          protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
        }),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
        // A WebSocket handshake is a GET; nothing else has a meaning on this path.
        allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        // CloudFront relays a WebSocket only if Sec-WebSocket-Key and -Version reach the origin; forwarding
        // every viewer header also carries Sec-WebSocket-Protocol (browser credentials), the x-gateway-*
        // headers and the query string (?model=). Host must stay the execute-api name for API Gateway.
        // No origin secret: the API's own URL stays public (the RealtimeUrl output), $connect authenticates.
        originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        compress: false,
        functionAssociations: [
          { function: this.realtimeRewrite, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST },
        ],
      };
    }
    for (const r of this.routes) additionalBehaviors[r.pathPattern] = behaviour(r.group);
    const domain = props.customDomain;
    if (domain) {
      // CloudFront only accepts certificates from us-east-1; say so at synth rather than at deploy.
      const region = Token.isUnresolved(domain.certificateArn)
        ? undefined
        : domain.certificateArn.split(':')[3];
      if (region !== undefined && region !== 'us-east-1') {
        throw new Error(
          `the certificate of a CloudFront domain must be in us-east-1, got ${domain.certificateArn}`,
        );
      }
    }
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'LLM gateway base URL',
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      defaultBehavior: behaviour(props.defaultGroup),
      additionalBehaviors,
      ...(props.webAclArn ? { webAclId: props.webAclArn } : {}),
      ...(domain
        ? {
            domainNames: [domain.domainName],
            certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', domain.certificateArn),
            minimumProtocolVersion: CUSTOM_DOMAIN_SECURITY_POLICY,
          }
        : {}),
      ...(props.logBucket
        ? { enableLogging: true, logBucket: props.logBucket, logFilePrefix: 'cloudfront/' }
        : {}),
    });
    if (!domain) {
      // The *.cloudfront.net certificate admits TLS 1.0 and no other policy can be chosen for it.
      Validations.of(this.distribution).acknowledge({
        id: 'AwsSolutions-CFR4',
        reason:
          'Without gateway:domainName the default CloudFront certificate is used, whose policy is fixed; with a domain the policy is TLSv1.2_2021',
      });
    }
    if (!props.webAclArn) {
      Validations.of(this.distribution).acknowledge({
        id: 'AwsSolutions-CFR2',
        reason: 'WAF was turned off for this deployment with gateway:waf=false',
      });
    }
    // Geo restriction is a business decision (the gateway serves whoever holds a key).
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR1',
      reason: 'No geographic restriction: access is decided by gateway keys and JWTs, not by country',
    });
  }
}
