// On `cdk destroy` of a stack whose removal policy is `destroy` (lib/secret-cleanup.ts), deletes the
// virtual-key secrets the control plane created at runtime: CloudFormation does not know them.
import http from 'node:http';
import https from 'node:https';
import {
  DeleteSecretCommand,
  ListSecretsCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';

// Secrets Manager allows 50 DeleteSecret calls a second; a few at a time stays well below it.
const PARALLEL_DELETES = 5;

/** Deletes every secret whose name starts with `prefix`, without recovery; returns how many. */
export async function deleteSecretsUnder(client: SecretsManagerClient, prefix: string): Promise<number> {
  // An empty prefix would name every secret of the account.
  if (!prefix.endsWith('/')) throw new Error(`refusing to delete secrets under ${JSON.stringify(prefix)}`);
  const names: string[] = [];
  let nextToken: string | undefined;
  do {
    const page = await client.send(
      new ListSecretsCommand({
        Filters: [{ Key: 'name', Values: [prefix] }],
        // A deleted virtual key waiting out a recovery window still holds its name.
        IncludePlannedDeletion: true,
        MaxResults: 100,
        NextToken: nextToken,
      }),
    );
    // The name filter is a prefix match; checking again keeps a look-alike name out.
    for (const s of page.SecretList ?? []) if (s.Name?.startsWith(prefix)) names.push(s.Name);
    nextToken = page.NextToken;
  } while (nextToken);
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const name = names[next++] as string;
      try {
        await client.send(new DeleteSecretCommand({ SecretId: name, ForceDeleteWithoutRecovery: true }));
      } catch (error) {
        if ((error as { name?: string }).name !== 'ResourceNotFoundException') throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_DELETES, names.length) }, worker));
  return names.length;
}

export interface CleanupResult {
  status: 'SUCCESS' | 'FAILED';
  reason?: string;
  deleted: number;
}

/** Create and update do nothing; delete removes the secrets under `prefix`. */
export async function handleCleanupEvent(
  event: CloudFormationCustomResourceEvent,
  client: SecretsManagerClient,
  prefix: string,
): Promise<CleanupResult> {
  if (event.RequestType !== 'Delete') return { status: 'SUCCESS', deleted: 0 };
  try {
    return { status: 'SUCCESS', deleted: await deleteSecretsUnder(client, prefix) };
  } catch (error) {
    return { status: 'FAILED', reason: (error as Error).message, deleted: 0 };
  }
}

/** Answers CloudFormation at the event's pre-signed URL (what the cfn-response module does). */
export function respond(event: CloudFormationCustomResourceEvent, result: CleanupResult): Promise<void> {
  const body = JSON.stringify({
    Status: result.status,
    Reason: result.reason ?? `deleted ${result.deleted} secrets`,
    PhysicalResourceId: 'PhysicalResourceId' in event ? event.PhysicalResourceId : event.LogicalResourceId,
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
    Data: { Deleted: result.deleted },
  });
  const url = new URL(event.ResponseURL);
  const transport = url.protocol === 'http:' ? http : https;
  return new Promise((resolve, reject) => {
    // The pre-signed URL signs no content type: send none.
    const req = transport.request(
      url,
      { method: 'PUT', headers: { 'content-type': '', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () =>
          (res.statusCode ?? 500) < 300 ? resolve() : reject(new Error(`response status ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
