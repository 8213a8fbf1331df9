import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  DeleteSecretCommand,
  ListSecretsCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { deleteSecretsUnder, handleCleanupEvent, respond } from '../../functions/store/secret-cleanup';

const sm = mockClient(SecretsManagerClient);
const client = new SecretsManagerClient({ region: 'eu-west-1' });
const PREFIX = 'gateway/LlmGateway/virtual-keys/';

function event(requestType: 'Create' | 'Update' | 'Delete', responseUrl = 'https://example.invalid/r') {
  return {
    RequestType: requestType,
    ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:cleanup',
    ResponseURL: responseUrl,
    StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/LlmGateway/abc',
    RequestId: 'req-1',
    LogicalResourceId: 'SecretCleanup',
    ResourceType: 'Custom::SecretCleanup',
    ResourceProperties: { ServiceToken: 'x' },
    ...(requestType === 'Create' ? {} : { PhysicalResourceId: 'cleanup-1' }),
    ...(requestType === 'Update' ? { OldResourceProperties: {} } : {}),
  } as CloudFormationCustomResourceEvent;
}

const deleted = () => sm.commandCalls(DeleteSecretCommand).map((c) => c.args[0].input);

describe('secret cleanup on stack deletion', () => {
  beforeEach(() => sm.reset());

  it('lists every page under the prefix, planned deletions included, and force-deletes each secret', async () => {
    sm.on(ListSecretsCommand)
      .resolvesOnce({
        SecretList: [{ Name: `${PREFIX}org_1/default/a` }, { Name: `${PREFIX}org_1/default/b` }],
        NextToken: 'page-2',
      })
      .resolvesOnce({
        // A look-alike the prefix filter could let through is kept.
        SecretList: [{ Name: `${PREFIX}org_2/team/c` }, { Name: 'gateway/LlmGateway/virtual-keys-other/x' }],
      });
    sm.on(DeleteSecretCommand).resolves({});
    expect(await deleteSecretsUnder(client, PREFIX)).toBe(3);
    const lists = sm.commandCalls(ListSecretsCommand).map((c) => c.args[0].input);
    expect(lists).toEqual([
      { Filters: [{ Key: 'name', Values: [PREFIX] }], IncludePlannedDeletion: true, MaxResults: 100 },
      {
        Filters: [{ Key: 'name', Values: [PREFIX] }],
        IncludePlannedDeletion: true,
        MaxResults: 100,
        NextToken: 'page-2',
      },
    ]);
    expect(deleted()).toEqual(
      ['org_1/default/a', 'org_1/default/b', 'org_2/team/c'].map((n) => ({
        SecretId: `${PREFIX}${n}`,
        ForceDeleteWithoutRecovery: true,
      })),
    );
  });

  it('takes a secret deleted meanwhile as done, and refuses a prefix that is not a folder', async () => {
    sm.on(ListSecretsCommand).resolves({ SecretList: [{ Name: `${PREFIX}gone` }] });
    sm.on(DeleteSecretCommand).rejects(new ResourceNotFoundException({ message: 'gone', $metadata: {} }));
    expect(await deleteSecretsUnder(client, PREFIX)).toBe(1);
    await expect(deleteSecretsUnder(client, '')).rejects.toThrow(/refusing/);
    await expect(deleteSecretsUnder(client, 'gateway')).rejects.toThrow(/refusing/);
    expect(sm.commandCalls(ListSecretsCommand)).toHaveLength(1);
  });

  it('does nothing on create and update, and reports a failed deletion as FAILED', async () => {
    sm.on(ListSecretsCommand).resolves({ SecretList: [{ Name: `${PREFIX}a` }] });
    sm.on(DeleteSecretCommand).rejects(new Error('AccessDenied'));
    expect(await handleCleanupEvent(event('Create'), client, PREFIX)).toEqual({
      status: 'SUCCESS',
      deleted: 0,
    });
    expect(await handleCleanupEvent(event('Update'), client, PREFIX)).toEqual({
      status: 'SUCCESS',
      deleted: 0,
    });
    expect(sm.calls()).toHaveLength(0);
    expect(await handleCleanupEvent(event('Delete'), client, PREFIX)).toEqual({
      status: 'FAILED',
      reason: 'AccessDenied',
      deleted: 0,
    });
  });

  it('answers CloudFormation at the pre-signed URL with a PUT and no content type', async () => {
    const received: { method?: string; url?: string; headers?: IncomingHttpHeaders; body: string } = {
      body: '',
    };
    const server = createServer((req, res) => {
      received.method = req.method;
      received.url = req.url;
      received.headers = req.headers;
      req.on('data', (c: Buffer) => {
        received.body += c.toString();
      });
      req.on('end', () => res.end());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      await respond(event('Delete', `http://127.0.0.1:${port}/signed?X-Amz-Signature=abc`), {
        status: 'SUCCESS',
        deleted: 2,
      });
    } finally {
      server.close();
    }
    expect(received.method).toBe('PUT');
    expect(received.url).toBe('/signed?X-Amz-Signature=abc');
    expect(received.headers?.['content-type']).toBe('');
    expect(JSON.parse(received.body)).toEqual({
      Status: 'SUCCESS',
      Reason: 'deleted 2 secrets',
      PhysicalResourceId: 'cleanup-1',
      StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/LlmGateway/abc',
      RequestId: 'req-1',
      LogicalResourceId: 'SecretCleanup',
      Data: { Deleted: 2 },
    });
  });
});
