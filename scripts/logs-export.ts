// `npm run logs:export [-- --out <file>] [--data-dir <dir>]`: every log entry of the local gateway as
// NDJSON, one line per entry, in exactly the record shape the deployed stack streams to Firehose and
// Athena (functions/store/log-export.ts): the same questions can be asked with DuckDB, jq or pandas.
// Reads the data dir's embedded DynamoDB through the gateway's own stores; stop `npm start` first (the
// database files take one process at a time), or point DYNAMODB_ENDPOINT at a running one.
import { createWriteStream } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ControlStore } from '../functions/store/control-store';
import { toExportRecord } from '../functions/store/log-export';
import { LogStore } from '../functions/store/log-store';
import { ALL_TABLES } from '../functions/store/tables';
import { ensureTables, localTableName, startDynalite } from '../local/dynamodb';

const PAGE = 100;

/** Writes one NDJSON line per log entry of the local organisation, newest first; returns the count. */
export async function exportLocalLogs(write: (line: string) => void): Promise<number> {
  const organisationId = await new ControlStore().getBootstrapOrganisationId();
  if (!organisationId) return 0;
  const logs = new LogStore();
  // One export is one version of every entry: they share the time it was taken.
  const recordedAt = Date.now();
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await logs.list({ organisationId, metadata: {}, limit: PAGE, cursor });
    for (const entry of page.data) {
      write(`${JSON.stringify(toExportRecord(entry, recordedAt))}\n`);
      count++;
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return count;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { out: { type: 'string' }, 'data-dir': { type: 'string' } },
  });
  const env = process.env;
  for (const def of ALL_TABLES) env[def.envVar] ??= localTableName(def);
  env.AWS_REGION ??= 'us-east-1';
  let dynamo: { close(): Promise<void> } | undefined;
  if (!env.DYNAMODB_ENDPOINT) {
    const started = await startDynalite(resolve(values['data-dir'] ?? env.GATEWAY_DATA_DIR ?? '.data'));
    dynamo = started;
    env.DYNAMODB_ENDPOINT = started.endpoint;
    // The embedded DynamoDB checks no signature, but the SDK insists on signing with something.
    env.AWS_ACCESS_KEY_ID ??= 'local';
    env.AWS_SECRET_ACCESS_KEY ??= 'local';
  }
  // A data dir the gateway never used has no tables yet: then there is simply nothing to export.
  await ensureTables(env.DYNAMODB_ENDPOINT);
  const out = values.out ? createWriteStream(values.out) : process.stdout;
  try {
    const count = await exportLocalLogs((line) => out.write(line));
    console.error(`logs:export: ${count} entries${values.out ? ` to ${values.out}` : ''}`);
  } finally {
    if (out !== process.stdout) await new Promise<void>((done) => out.end(done));
    await dynamo?.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
