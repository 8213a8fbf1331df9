import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: {
      // Short enough that a deleted key's expiry can be observed in a test.
      GATEWAY_AUTH_CACHE_TTL_MS: '300',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      // CI runs Node 20; the SDK's one-time notice about Node 22 says nothing about the code under test.
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  },
});
