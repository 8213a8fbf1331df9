import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings, parseSettings, SettingsError, settings } from '../../functions/core/settings';

const saved = process.env.GATEWAY_RETRY_BASE_MS;
afterEach(() => {
  if (saved === undefined) delete process.env.GATEWAY_RETRY_BASE_MS;
  else process.env.GATEWAY_RETRY_BASE_MS = saved;
  loadSettings();
});

describe('settings', () => {
  it('has the documented defaults for an empty environment', () => {
    const s = parseSettings({});
    expect(s).toMatchObject({
      local: false,
      onAws: false,
      serviceName: 'gateway',
      port: 8787,
      host: '127.0.0.1',
      logLevel: 'info',
      dataDir: '.data',
      storeNice: 19,
      maxBodyBytes: 5_000_000,
      upstreamTimeoutMs: 600_000,
      authCacheTtlMs: 10_000,
      configCacheTtlMs: 10_000,
      policyCacheTtlMs: 10_000,
      virtualKeyCacheTtlMs: 10_000,
      secretCacheTtlMs: 60_000,
      jwksCacheTtlMs: 300_000,
      jwksBackoffMs: 10_000,
      logRetentionDays: 30,
      logShards: 8,
      logReadBudget: 4_000,
      aggregateFlushMs: 0,
      streamPaddingBytes: 0,
      sseKeepAliveMs: 15_000,
      abandonedStreamDrainMs: 2_000,
      reservationTtlSeconds: 960,
      retryBaseMs: 200,
      retryMaxDelayMs: 10_000,
      pricingTimeoutMs: 3_000,
      realtimeQueuePrefix: 'gateway-rt-',
      realtimeSessionLimitMs: 870_000,
      realtimeLogIntervalMs: 15_000,
      recoverAdminKey: false,
      allowPrivateHosts: undefined,
      tables: {},
    });
    expect(s.adminKey).toBeUndefined();
    expect(s.dynamodbEndpoint).toBeUndefined();
  });

  it('parses the values it is given, and treats an empty variable as unset', () => {
    const s = parseSettings({
      GATEWAY_LOCAL: '1',
      GATEWAY_SSE_KEEPALIVE_MS: '0',
      GATEWAY_UPSTREAM_TIMEOUT_MS: ' 1500 ',
      GATEWAY_ALLOW_PRIVATE_HOSTS: 'FALSE',
      GATEWAY_LOG_LEVEL: 'Warn',
      GATEWAY_STORE_NICE: '0',
      GATEWAY_RESERVATION_TTL_SECONDS: '-1',
      GATEWAY_ADMIN_KEY: '',
      DYNAMODB_ENDPOINT: '',
      GATEWAY_MAX_BODY_BYTES: '',
      TABLE_LOGS: 'gw-logs',
      TABLE_CONTROL: 'gw-control',
    });
    expect(s).toMatchObject({
      local: true,
      sseKeepAliveMs: 0,
      upstreamTimeoutMs: 1500,
      allowPrivateHosts: false,
      logLevel: 'warn',
      storeNice: 0,
      reservationTtlSeconds: -1,
      maxBodyBytes: 5_000_000,
      tables: { TABLE_LOGS: 'gw-logs', TABLE_CONTROL: 'gw-control' },
    });
    expect(s.adminKey).toBeUndefined();
    expect(s.dynamodbEndpoint).toBeUndefined();
  });

  it('knows it runs on AWS from what Lambda and ECS set, unless the local runtime says otherwise', () => {
    expect(parseSettings({ AWS_LAMBDA_FUNCTION_NAME: 'gw-chat' }).onAws).toBe(true);
    expect(parseSettings({ ECS_CONTAINER_METADATA_URI_V4: 'http://x' }).onAws).toBe(true);
    expect(parseSettings({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs20.x' }).onAws).toBe(true);
    expect(parseSettings({ AWS_LAMBDA_FUNCTION_NAME: 'f', GATEWAY_LOCAL: '1' }).onAws).toBe(false);
  });

  it('refuses a bad value with one error naming every bad variable, never a NaN', () => {
    let error: unknown;
    try {
      parseSettings({
        GATEWAY_UPSTREAM_TIMEOUT_MS: 'ten minutes',
        GATEWAY_LOG_SHARDS: '0',
        GATEWAY_STREAM_PADDING_BYTES: '100000',
        GATEWAY_RETRY_BASE_MS: '1.5',
        GATEWAY_ALLOW_PRIVATE_HOSTS: 'yes',
        GATEWAY_LOG_LEVEL: 'loud',
        GATEWAY_STORE_NICE: '20',
        PORT: '-1',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SettingsError);
    expect((error as SettingsError).problems).toEqual([
      'PORT must be an integer from 0 to 65535, not "-1"',
      'GATEWAY_LOG_LEVEL must be one of debug, info, warn, error, not "loud"',
      'GATEWAY_STORE_NICE must be an integer from 0 to 19, not "20"',
      'GATEWAY_LOG_SHARDS must be an integer >= 1, not "0"',
      'GATEWAY_UPSTREAM_TIMEOUT_MS must be an integer >= 1, not "ten minutes"',
      'GATEWAY_RETRY_BASE_MS must be an integer >= 0, not "1.5"',
      'GATEWAY_STREAM_PADDING_BYTES must be an integer from 0 to 65536, not "100000"',
      'GATEWAY_ALLOW_PRIVATE_HOSTS must be true or false, not "yes"',
    ]);
    expect((error as Error).message).toMatch(/^Invalid configuration: PORT must be/);
  });

  it('keeps one current object until it is loaded again', () => {
    process.env.GATEWAY_RETRY_BASE_MS = '5';
    const loaded = loadSettings();
    expect(settings()).toBe(loaded);
    expect(settings().retryBaseMs).toBe(5);
    process.env.GATEWAY_RETRY_BASE_MS = '7';
    expect(settings().retryBaseMs).toBe(5);
    expect(loadSettings().retryBaseMs).toBe(7);
    expect(Object.isFrozen(settings())).toBe(true);
  });
});
