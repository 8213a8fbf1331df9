// esbuild settings shared by the stack (NodejsFunction) and scripts/build.ts, so that `npm run build`
// measures exactly the bundles that `cdk deploy` ships.
import { aws_lambda_nodejs as nodejs } from 'aws-cdk-lib';
import type { BuildOptions } from 'esbuild';
import type { FunctionGroupName } from '../functions/core/operations';

export const BUNDLE_TARGET = 'node22';

// Lambda loads `index.mjs` as ESM; NodejsFunction names its output the same way for OutputFormat.ESM.
export const BUNDLE_FILE_NAME = 'index.mjs';

// CJS dependencies call `require` for Node built-ins, which ESM lacks; the alias keeps the import from
// colliding with a bundled module that also imports `createRequire`.
export const REQUIRE_BANNER =
  "import { createRequire as __gatewayCreateRequire } from 'node:module';" +
  'const require = __gatewayCreateRequire(import.meta.url);';

// Clients imported lazily on rare paths (large log bodies, the first admin-key bootstrap) come from the
// SDK v3 that the Node.js 22 Lambda runtime ships: bundling them would double the size of every function
// and its cold start for code most containers never run. `@aws-sdk/credential-provider-node` is not
// listed: Lambda bundles alias it to an env-only provider (ALIASES below). The realtime clients (SQS, Lambda, the
// `@connections` management API) are imported lazily too, so the HTTP functions never carry them. The
// log export function's Firehose client is the runtime's too.
export const RUNTIME_PROVIDED = [
  '@aws-sdk/client-s3',
  '@aws-sdk/client-secrets-manager',
  '@aws-sdk/client-sqs',
  '@aws-sdk/client-lambda',
  '@aws-sdk/client-apigatewaymanagementapi',
  '@aws-sdk/client-firehose',
  // Budget alerts only.
  '@aws-sdk/client-sns',
];

// Lambda passes credentials in environment variables: the SDK's default credential chain is swapped for
// an env-only provider in function bundles (see functions/store/lambda-credentials.ts).
export const ALIASES: Record<string, string> = {
  '@aws-sdk/credential-provider-node': './functions/store/lambda-credentials.ts',
};

// Prefer ESM builds of dependencies: they tree-shake far better than their CJS builds.
export const MAIN_FIELDS = ['module', 'main'];

/** Source maps cost bundle size and cold start, so they are opt-in with `GATEWAY_SOURCEMAPS=1`. */
export function sourceMapsEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.GATEWAY_SOURCEMAPS === '1';
}

/** Plain esbuild options for bundling one handler into `outfile`, used by scripts/build.ts. */
export function esbuildOptions(
  entry: string,
  outfile: string,
  sourceMaps: boolean = sourceMapsEnabled(),
): BuildOptions {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    external: [...RUNTIME_PROVIDED],
    alias: ALIASES,
    platform: 'node',
    target: BUNDLE_TARGET,
    format: 'esm',
    minify: true,
    sourcemap: sourceMaps,
    banner: { js: REQUIRE_BANNER },
    mainFields: MAIN_FIELDS,
    metafile: true,
    logLevel: 'warning',
  };
}

/**
 * Static files a function serves, built into a folder of this name beside its bundle (the handler finds
 * them there): the dashboard function's page, script and styles.
 */
export const BUNDLED_ASSETS: Partial<Record<FunctionGroupName, string>> = { dashboard: 'dashboard' };

/** Shell commands that build a group's static files into the bundle's output folder. */
function assetHooks(group: FunctionGroupName | undefined): nodejs.ICommandHooks | undefined {
  const folder = group && BUNDLED_ASSETS[group];
  if (!folder) return undefined;
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) => [
      `"${inputDir}/node_modules/.bin/tsx" "${inputDir}/dashboard/build.ts" "${outputDir}/${folder}"`,
    ],
  };
}

/** The same settings expressed as NodejsFunction bundling options, used by lib/gateway-stack.ts. */
export function lambdaBundling(
  sourceMaps: boolean = sourceMapsEnabled(),
  group?: FunctionGroupName,
): nodejs.BundlingOptions {
  const commandHooks = assetHooks(group);
  return {
    format: nodejs.OutputFormat.ESM,
    target: BUNDLE_TARGET,
    minify: true,
    sourceMap: sourceMaps,
    banner: REQUIRE_BANNER,
    mainFields: MAIN_FIELDS,
    // The hot-path SDK clients (DynamoDB) are bundled at the version we test; see RUNTIME_PROVIDED.
    bundleAwsSDK: true,
    externalModules: [...RUNTIME_PROVIDED],
    esbuildArgs: Object.fromEntries(Object.entries(ALIASES).map(([from, to]) => [`--alias:${from}`, to])),
    ...(commandHooks ? { commandHooks } : {}),
  };
}
