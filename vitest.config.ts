import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// The dashboard's browser tests drive a Chromium installed on the machine (never a downloaded one).
// They run wherever one is found; CI installs Debian's and sets GATEWAY_REQUIRE_BROWSER=1, so there a
// missing browser fails the run instead of leaving the tests out.
const CHROMIUM_CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
const chromium = CHROMIUM_CANDIDATES.find((path): path is string => !!path && existsSync(path));
if (!chromium) {
  if (process.env.GATEWAY_REQUIRE_BROWSER === '1') {
    throw new Error(
      'GATEWAY_REQUIRE_BROWSER=1 but no Chromium found: apt-get install -y chromium, or set CHROMIUM_PATH',
    );
  }
  console.warn(
    'No Chromium found (set CHROMIUM_PATH): the dashboard browser tests in test/browser are not run.',
  );
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: chromium ? [] : ['test/browser/**'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: {
      // Short enough that a deleted key's expiry can be observed in a test.
      GATEWAY_AUTH_CACHE_TTL_MS: '300',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      // The local server's line per request would drown the test output; tests that read it set their own.
      GATEWAY_LOG_LEVEL: 'warn',
      // CI runs Node 20; the SDK's one-time notice about Node 22 says nothing about the code under test.
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      CHROMIUM_PATH: chromium ?? '',
    },
  },
});
