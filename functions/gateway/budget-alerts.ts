import { createHmac } from 'node:crypto';
import { logger } from '../core/logger';
import { readAll, sendUpstream } from './upstream';

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
  webhook: { url: string; secret: string } | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  logger.warn('budget alert', { event: 'budget_alert', ...alert });
  const body = JSON.stringify({ type: 'budget_alert', ...alert });
  const tasks: Array<Promise<unknown>> = [];
  const topic = env.GATEWAY_ALERT_TOPIC_ARN;
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
      sendUpstream({
        url: new URL(webhook.url),
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [WEBHOOK_SIGNATURE_HEADER]: signBody(webhook.secret, body),
        },
        body,
        signal: new AbortController().signal,
        timeoutMs: 5_000,
      }).then(async (reply) => {
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
