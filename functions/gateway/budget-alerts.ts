import { createHmac } from 'node:crypto';
import { logger } from '../core/logger';
import { type Settings, settings } from '../core/settings';
import { type SecretStore, secretStore } from '../store/secret-store';
import { readAll, sendUpstream } from './upstream';

/** A workspace policy's webhook as stored: the URL, and the name of its signing secret in the secret store. */
export interface BudgetAlertWebhook {
  url: string;
  secret_ref: string;
}

/** A budget alert, as SNS and the webhook receive it. */
export interface BudgetAlertMessage {
  kind: 'threshold' | 'exhausted';
  holder: string;
  name: string;
  organisation_id: string;
  workspace: string;
  period: string;
  threshold_usd: number;
  budget_limit: number;
  /** The period's spend after the charge that crossed the threshold; null for a refusal. */
  spent: number | null;
  created_at: string;
}

export const WEBHOOK_SIGNATURE_HEADER = 'x-gateway-signature';

/** `sha256=<hex>`: HMAC-SHA256 of the exact body with the workspace's webhook secret. */
export const signBody = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

type SnsModule = typeof import('@aws-sdk/client-sns');
let sns: Promise<{ module: SnsModule; client: InstanceType<SnsModule['SNSClient']> }> | undefined;

/** The SNS client, loaded on the first alert only: most invocations never send one. */
function snsClient() {
  sns ??= import('@aws-sdk/client-sns').then((module) => ({ module, client: new module.SNSClient({}) }));
  return sns;
}

/**
 * Sends a budget alert (already recorded once for its period) to the stack's alert topic on AWS and,
 * when the workspace set one, to its webhook through the outbound guard. A failure is logged: an alert
 * never fails the request that triggered it.
 */
export async function notifyBudgetAlert(
  alert: BudgetAlertMessage,
  webhook: BudgetAlertWebhook | undefined,
  { alertTopicArn: topic }: Pick<Settings, 'alertTopicArn'> = settings(),
  secrets: SecretStore = secretStore(),
): Promise<void> {
  logger.warn('budget alert', { event: 'budget_alert', ...alert });
  const body = JSON.stringify({ type: 'budget_alert', ...alert });
  const tasks: Array<Promise<unknown>> = [];
  if (topic) {
    tasks.push(
      snsClient().then(({ module, client }) =>
        client.send(
          new module.PublishCommand({
            TopicArn: topic,
            Subject: `Gateway budget ${alert.kind}: ${alert.holder} ${alert.name}`.slice(0, 100),
            Message: body,
          }),
        ),
      ),
    );
  }
  if (webhook) {
    tasks.push(
      secrets.get(webhook.secret_ref).then(async (secret) => {
        if (secret === undefined) throw new Error('webhook secret not found in the secret store');
        const reply = await sendUpstream({
          url: new URL(webhook.url),
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            [WEBHOOK_SIGNATURE_HEADER]: signBody(secret, body),
          },
          body,
          signal: new AbortController().signal,
          timeoutMs: 5_000,
        });
        await readAll(reply.body, 64 * 1024);
        if (reply.status >= 400) throw new Error(`webhook answered ${reply.status}`);
      }),
    );
  }
  const results = await Promise.allSettled(tasks);
  for (const r of results) {
    if (r.status === 'rejected') {
      logger.error('budget alert not delivered', { error: String((r.reason as Error)?.message ?? r.reason) });
    }
  }
}
