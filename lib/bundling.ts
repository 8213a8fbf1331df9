// esbuild settings shared by the stack (NodejsFunction) and scripts/build.ts, so that `npm run build`
// measures exactly the bundles that `cdk deploy` ships.
import { aws_lambda_nodejs as nodejs } from 'aws-cdk-lib';
import type { BuildOptions, Metafile } from 'esbuild';
import { FUNCTION_GROUPS, type FunctionGroupName } from '../functions/core/operations';

export const BUNDLE_TARGET = 'node22';

// Lambda loads `index.mjs` as ESM; NodejsFunction names its output the same way for OutputFormat.ESM.
export const BUNDLE_FILE_NAME = 'index.mjs';

// CJS dependencies call `require` for Node built-ins, which ESM lacks; the alias keeps the import from
// colliding with a bundled module that also imports `createRequire`. Written minified: esbuild puts the
// banner, as given, at the top of every output file, the entry and each chunk.
export const REQUIRE_BANNER =
  'import{createRequire as __gwCR}from"node:module";const require=__gwCR(import.meta.url);';

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
// an env-only provider in function bundles (see functions/store/lambda-credentials.ts). The stores'
// DynamoDB commands are plain classes there, sent by functions/store/dynamodb-http.ts without the SDK
// client (see functions/store/dynamodb-commands.ts).
export const ALIASES: Record<string, string> = {
  '@aws-sdk/credential-provider-node': './functions/store/lambda-credentials.ts',
  '@aws-sdk/lib-dynamodb': './functions/store/dynamodb-commands.ts',
  '@aws-sdk/client-dynamodb': './functions/store/dynamodb-commands.ts',
  // Middy's core imports it at load for a mode the gateway does not use; see the module.
  'node:stream/web': './functions/core/web-streams-on-demand.ts',
  // On Node 22 its ESM import loads Node's undici for three getters; see the module.
  'node:http': './functions/core/node-http.ts',
};

// Prefer ESM builds of dependencies: they tree-shake far better than their CJS builds.
export const MAIN_FIELDS = ['module', 'main'];

/** Source maps cost bundle size and cold start, so they are opt-in with `GATEWAY_SOURCEMAPS=1`. */
export function sourceMapsEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.GATEWAY_SOURCEMAPS === '1';
}

// Modules imported with `await import()` on rare paths (a guardrail's regex engine or JSON Schema validator)
// go to chunks beside index.mjs, which Lambda's ESM loader reads only when that path first runs.
const CHUNK_NAMES = 'chunks/[name]-[hash]';

/**
 * Plain esbuild options for bundling one handler into `outdir` (`index.mjs` and its lazy chunks), used by
 * scripts/build.ts and, through scripts/bundle-function.ts, by the stack.
 */
export function esbuildOptions(
  entry: string,
  outdir: string,
  sourceMaps: boolean = sourceMapsEnabled(),
): BuildOptions {
  return {
    entryPoints: { [BUNDLE_FILE_NAME.replace(/\.mjs$/, '')]: entry },
    outdir,
    outExtension: { '.js': '.mjs' },
    splitting: true,
    chunkNames: CHUNK_NAMES,
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

/** The outputs a cold start loads: the entry and the chunks it imports statically, not lazy ones. */
export function startupOutputs(metafile: Metafile): string[] {
  const outputs = metafile.outputs;
  // Lazily imported modules are entry points of their own chunks too: the handler's is index.mjs.
  const entry = Object.keys(outputs).find((path) => path.split('/').pop() === BUNDLE_FILE_NAME);
  const seen = new Set<string>();
  const visit = (path: string): void => {
    const output = outputs[path];
    if (!output || seen.has(path)) return;
    seen.add(path);
    for (const dep of output.imports) if (dep.kind === 'import-statement' && !dep.external) visit(dep.path);
  };
  if (entry) visit(entry);
  return [...seen];
}

/** Bytes a cold start loads (`startupOutputs`). */
export function startupBytes(metafile: Metafile): number {
  return startupOutputs(metafile).reduce((sum, path) => sum + (metafile.outputs[path]?.bytes ?? 0), 0);
}

/** Bytes of every `.mjs` output, lazy chunks included: what the deployment package holds. */
export function totalBytes(metafile: Metafile): number {
  return Object.entries(metafile.outputs)
    .filter(([path]) => path.endsWith('.mjs'))
    .reduce((sum, [, output]) => sum + output.bytes, 0);
}

/**
 * Shell commands run after NodejsFunction's own esbuild: a function group is bundled again with code
 * splitting (NodejsFunction's single `--outfile` cannot split), then its static files are built beside it.
 */
function groupHooks(
  group: FunctionGroupName | undefined,
  sourceMaps: boolean,
): nodejs.ICommandHooks | undefined {
  if (!group) return undefined;
  const folder = BUNDLED_ASSETS[group];
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) => [
      `"${inputDir}/node_modules/.bin/tsx" "${inputDir}/scripts/bundle-function.ts" "${inputDir}/${FUNCTION_GROUPS[group].entry}" "${outputDir}"${sourceMaps ? ' --sourcemap' : ''}`,
      ...(folder
        ? [`"${inputDir}/node_modules/.bin/tsx" "${inputDir}/dashboard/build.ts" "${outputDir}/${folder}"`]
        : []),
    ],
  };
}

/** The same settings expressed as NodejsFunction bundling options, used by lib/gateway-stack.ts. */
export function lambdaBundling(
  sourceMaps: boolean = sourceMapsEnabled(),
  group?: FunctionGroupName,
): nodejs.BundlingOptions {
  const commandHooks = groupHooks(group, sourceMaps);
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
