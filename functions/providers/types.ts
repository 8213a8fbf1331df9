import type { GatewayError } from '../core/errors';

/** What the gateway knows of a caller's route to a provider for one request. */
export interface ProviderTarget {
  apiKey?: string;
  organization?: string;
  project?: string;
  /** AWS region (Bedrock). */
  region?: string;
  /** Azure OpenAI resource name, deployment id and API version. */
  resourceName?: string;
  deploymentId?: string;
  apiVersion?: string;
}

export type ModelOperation = 'chat.completions';

export type Json = Record<string, unknown>;

/** One framed event of a provider stream: an SSE event, or one AWS event-stream message. */
export interface ProviderEvent {
  /** SSE `event:` name, or the AWS `:event-type` / `:exception-type`. */
  event: string | undefined;
  data: string;
  /** The provider framed it as an error (AWS `:message-type` exception or error). */
  exception?: boolean;
}

/** Splits a byte stream into provider events, holding partial frames between pushes. */
export interface StreamDecoder {
  push(bytes: Uint8Array): ProviderEvent[];
  /** Whatever complete events remain once the stream has ended. */
  flush(): ProviderEvent[];
}

/**
 * Turns one provider stream into OpenAI `chat.completion.chunk` objects. It carries a small state
 * between events (ids, open tool calls, usage), and never throws on an event it does not know.
 */
export interface StreamTranslator {
  push(event: ProviderEvent): Json[];
  /** Chunks owed once the provider stream has ended (usage arrives last on some providers). */
  end(): Json[];
  /** The provider said the message is complete. */
  readonly complete: boolean;
  /** An error the provider reported inside the stream. */
  readonly failure: GatewayError | undefined;
}

/** Everything a translator needs to know of the call besides the request body. */
export interface ChatContext {
  /** The model the provider sees (without any `@slug/`). */
  model: string;
  stream: boolean;
  /** Base URL: the custom host, or the provider's own. */
  baseUrl: string;
  target: ProviderTarget;
}

export interface ChatCall {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** A provider whose wire format is not OpenAI's: request, reply, stream and error translations. */
export interface ChatTranslation {
  /** URL, headers and body of the upstream call (Bedrock signs here, hence async). */
  buildCall(body: Json, ctx: ChatContext): ChatCall | Promise<ChatCall>;
  /** The provider's reply as a `chat.completion`. */
  response(reply: unknown, ctx: ChatContext): Json;
  /** Content type of a streamed reply, as the provider sends it. */
  streamContentType: string;
  decoder(): StreamDecoder;
  stream(ctx: ChatContext): StreamTranslator;
  /** The provider's error reply, with its status kept and the origin set to provider. */
  error(status: number, body: unknown, text: string, headers: Record<string, unknown>): GatewayError;
}

export type ModelsCall = Omit<ChatCall, 'body'>;

/** A provider whose model listing is not OpenAI's: where it is, and its entries as OpenAI `model` objects. */
export interface ModelsTranslation {
  /** URL and headers of the listing, or of the one model `id` names (Bedrock signs here, hence async). */
  call(baseUrl: string, target: ProviderTarget, id?: string): ModelsCall | Promise<ModelsCall>;
  list(reply: unknown): Json[];
  one(reply: unknown): Json;
}

/** A provider: where it lives, how it authenticates, where each operation is, how it is translated. */
export interface ProviderAdapter {
  name: string;
  /** Base URL when no custom host is given; undefined means a custom host is required. */
  baseUrl?: string | ((target: ProviderTarget) => string | undefined);
  /** Says what is missing when there is no base URL. */
  baseUrlHint?: string;
  /** Base URL made of a custom host, when the provider adds a path to it. */
  hostBase?(host: string): string;
  /** Auth and account headers for the upstream request. */
  headers(target: ProviderTarget): Record<string, string>;
  /** Path of each operation, relative to the base URL. */
  paths: Record<ModelOperation, string>;
  /** Full URL of an operation when it is not base URL + path (Azure's deployment URLs). */
  endpoint?(operation: ModelOperation, ctx: ChatContext): string;
  /** The upstream header holding its request id, passed on as `x-gateway-upstream-request-id`. */
  requestIdHeader?: string;
  /** Absent for the OpenAI wire format: the body and stream are forwarded byte for byte. */
  chat?: ChatTranslation;
  /** Absent when the provider lists its models in OpenAI's shape. */
  models?: ModelsTranslation;
}
