// Starts the relay that owns a realtime session: an asynchronous invocation (InvocationType Event) of
// the relay function on AWS, the relay handler in process locally (installed by local/realtime.ts).
import { settings } from '../core/settings';

export interface RelayLauncher {
  launch(job: unknown): Promise<void>;
}

type LambdaModule = typeof import('@aws-sdk/client-lambda');

export class LambdaRelayLauncher implements RelayLauncher {
  // Loaded on first use: the SDK comes from the Lambda runtime (lib/bundling.ts RUNTIME_PROVIDED).
  private loaded?: Promise<{ client: InstanceType<LambdaModule['LambdaClient']>; mod: LambdaModule }>;

  constructor(private readonly functionName: string) {}

  async launch(job: unknown): Promise<void> {
    this.loaded ??= import('@aws-sdk/client-lambda').then((mod) => ({
      client: new mod.LambdaClient({ maxAttempts: 3 }),
      mod,
    }));
    const { client, mod } = await this.loaded;
    const out = await client.send(
      new mod.InvokeCommand({
        FunctionName: this.functionName,
        InvocationType: 'Event',
        Payload: Buffer.from(JSON.stringify(job)),
      }),
    );
    if (out.StatusCode !== 202) throw new Error(`relay invocation answered ${out.StatusCode}`);
  }
}

let launcher: RelayLauncher | undefined;

/** The local runtime installs its in-process launcher here before any connection is accepted. */
export function useRelayLauncher(local: RelayLauncher): void {
  launcher = local;
}

export function relayLauncher(): RelayLauncher {
  if (!launcher) {
    const name = settings().realtimeRelayFunction;
    if (!name) throw new Error('GATEWAY_REALTIME_RELAY_FUNCTION is not set and no local relay is installed');
    launcher = new LambdaRelayLauncher(name);
  }
  return launcher;
}
