// The custom resource of lib/secret-cleanup.ts: on stack deletion, removes the stack's runtime secrets.
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CloudFormationCustomResourceEvent, Context } from 'aws-lambda';
import { logger, logInvocation } from '../core/logger';
import { settings } from '../core/settings';
import { handleCleanupEvent, respond } from '../store/secret-cleanup';

const client = new SecretsManagerClient({});

export const handler = async (event: CloudFormationCustomResourceEvent, context: Context): Promise<void> => {
  logInvocation(context);
  const prefix = settings().secretPrefix ?? '';
  const result = await handleCleanupEvent(event, client, prefix);
  logger.info('secret cleanup', { requestType: event.RequestType, prefix, ...result });
  await respond(event, result);
};
