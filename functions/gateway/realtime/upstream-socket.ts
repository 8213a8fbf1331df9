import WebSocket from 'ws';
import { type GatewayError, providerFailure, upstreamUnreachable } from '../../core/errors';
import { credentialMasker } from '../../core/secret-mask';
import { checkOutboundUrl, guardedLookup } from '../address-guard';
import { toGatewayError } from '../upstream';
import type { RealtimeUpstream } from './upstream-endpoint';

// Provider events are far smaller, but a cap keeps one bad event from taking the relay's memory.
const MAX_UPSTREAM_EVENT_BYTES = 16 * 1024 * 1024;

export interface UpstreamListeners {
  message(data: WebSocket.RawData, isBinary: boolean): void;
  close(code: number, reason: Buffer): void;
  error(error: Error): void;
}

/**
 * Opens the provider's realtime socket; a refusal keeps the provider's status and message. The listeners
 * go on in the `open` event itself: the provider's first event may arrive in the same packet as the
 * upgrade reply and be emitted before an awaiting caller could attach anything.
 */
export function openUpstreamSocket(
  upstream: RealtimeUpstream,
  timeoutMs: number,
  listeners: UpstreamListeners,
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const url = new URL(upstream.url);
    try {
      checkOutboundUrl(url);
    } catch (error) {
      reject(error);
      return;
    }
    const options: WebSocket.ClientOptions & { lookup: typeof guardedLookup } = {
      headers: upstream.headers,
      handshakeTimeout: timeoutMs,
      perMessageDeflate: false,
      maxPayload: MAX_UPSTREAM_EVENT_BYTES,
      followRedirects: false,
      // The same guard as HTTP calls, on the address the name resolves to when the socket connects.
      lookup: guardedLookup,
    };
    const socket = new WebSocket(url, options);
    const fail = (error: GatewayError) => {
      socket.removeAllListeners('open');
      reject(error);
    };
    socket.once('open', () => {
      socket.removeAllListeners('unexpected-response');
      socket.removeAllListeners('error');
      socket.on('message', listeners.message);
      socket.on('close', listeners.close);
      socket.on('error', listeners.error);
      resolve(socket);
    });
    socket.once('error', (error: Error) => {
      const timedOut = /timed out|timeout/i.test(error.message);
      fail(
        toGatewayError(error, false, timeoutMs).code === 'upstream_unreachable' && timedOut
          ? upstreamUnreachable('opening the realtime connection timed out', 504)
          : toGatewayError(error, false, timeoutMs),
      );
    });
    socket.once('unexpected-response', (_request, response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        if (text.length < 4096) text += chunk;
      });
      response.on('end', () => {
        socket.removeAllListeners('error');
        socket.on('error', () => undefined);
        socket.terminate();
        // A refusal may echo the credential it was given: masked before it reaches the client or the log.
        fail(refusalOf(response.statusCode ?? 502, credentialMasker(undefined, upstream.headers).mask(text)));
      });
    });
  });
}

/** A provider's refusal of the upgrade: its status and error message, marked as the provider's. */
function refusalOf(status: number, text: string): GatewayError {
  let message = `The provider refused the realtime connection with status ${status}.`;
  let type = 'provider_error';
  let code: string | null = null;
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown; type?: unknown; code?: unknown } };
    if (typeof body.error?.message === 'string') message = body.error.message;
    if (typeof body.error?.type === 'string') type = body.error.type;
    if (typeof body.error?.code === 'string') code = body.error.code;
  } catch {
    // not JSON: the status says enough
  }
  return providerFailure(status, type, message, code);
}
