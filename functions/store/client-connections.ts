import type { ApiGatewayManagementApiClient } from '@aws-sdk/client-apigatewaymanagementapi';
import { settings } from '../core/settings';

// The way back to a realtime client: API Gateway's `@connections` management API (PostToConnection,
// DeleteConnection). The local server serves the same API on its own port, so this adapter is the only one.

/** The client's connection is closed (or not open yet): API Gateway answers 410. */
export class ConnectionGoneError extends Error {
  constructor(connectionId: string) {
    super(`connection ${connectionId} is gone`);
    this.name = 'ConnectionGoneError';
  }
}

export interface ClientConnections {
  post(endpoint: string, connectionId: string, data: string | Uint8Array): Promise<void>;
  /**
   * Closes the client's socket. API Gateway always closes with 1000; the code travels in a header that only
   * the local server honours, which is why every close is preceded by an `error` event saying why.
   */
  close(endpoint: string, connectionId: string, code: number, reason: string): Promise<void>;
}

type ManagementModule = typeof import('@aws-sdk/client-apigatewaymanagementapi');

export const CLOSE_CODE_HEADER = 'x-gateway-close-code';
export const CLOSE_REASON_HEADER = 'x-gateway-close-reason';

export class ManagementApiConnections implements ClientConnections {
  private mod?: Promise<ManagementModule>;
  private readonly clients = new Map<string, ApiGatewayManagementApiClient>();

  private async client(
    endpoint: string,
  ): Promise<{ client: ApiGatewayManagementApiClient; mod: ManagementModule }> {
    // Loaded on first use: the SDK comes from the Lambda runtime (lib/bundling.ts RUNTIME_PROVIDED).
    this.mod ??= import('@aws-sdk/client-apigatewaymanagementapi');
    const mod = await this.mod;
    let client = this.clients.get(endpoint);
    if (!client) {
      const { local } = settings();
      client = new mod.ApiGatewayManagementApiClient({
        endpoint,
        maxAttempts: 3,
        // The local management API checks no signature; the SDK still wants something to sign with.
        ...(local ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
      });
      this.clients.set(endpoint, client);
    }
    return { client, mod };
  }

  async post(endpoint: string, connectionId: string, data: string | Uint8Array): Promise<void> {
    const { client, mod } = await this.client(endpoint);
    try {
      await client.send(
        new mod.PostToConnectionCommand({
          ConnectionId: connectionId,
          Data: typeof data === 'string' ? Buffer.from(data) : data,
        }),
      );
    } catch (error) {
      if (error instanceof mod.GoneException) throw new ConnectionGoneError(connectionId);
      throw error;
    }
  }

  async close(endpoint: string, connectionId: string, code: number, reason: string): Promise<void> {
    const { client, mod } = await this.client(endpoint);
    const command = new mod.DeleteConnectionCommand({ ConnectionId: connectionId });
    command.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { headers?: Record<string, string> };
        if (request.headers) {
          request.headers[CLOSE_CODE_HEADER] = String(code);
          request.headers[CLOSE_REASON_HEADER] = reason.replace(/[^\x20-\x7e]/g, '').slice(0, 120);
        }
        return next(args);
      },
      { step: 'build', name: 'gatewayCloseCode' },
    );
    try {
      await client.send(command);
    } catch (error) {
      if (error instanceof mod.GoneException) return;
      throw error;
    }
  }
}

let connections: ClientConnections | undefined;

export function clientConnections(): ClientConnections {
  connections ??= new ManagementApiConnections();
  return connections;
}
