import { badRequest, bodyTooLarge, internalError, streamFailed } from '../core/errors';
import type { HttpEvent, ModelCallState } from '../core/http';
import type { UsageLogDraft } from '../core/log-entry';
import type { Principal } from '../core/principal';
import { bodyText, checkFieldLengths, jsonBody } from '../core/request-body';
import { settings } from '../core/settings';
import { withFields } from './audio-translation';
import { type CallSuccess, exchange } from './call-upstream';
import type { OperationHandler } from './dispatch';
import type { Costing } from './media-pricing';
import { routeModelCall } from './model-call';
import { type MultipartForm, readMultipart, replaceField } from './multipart';
import { type OperatorPrices, tokenBound } from './pricing';
import type { ResolvedTarget } from './target';
import { ClientGoneError, type UpstreamResponse } from './upstream';

// The OpenAI operations the gateway relays as they are. Each function group declares its own in a table
// (media-passthrough.ts, files-passthrough.ts, responses.ts): what each takes (no body, or a body: JSON or
// multipart by its content type), how it is checked, whether its reply is binary (streamed through as it
// arrives, never buffered), and how it is costed. Routing, virtual keys, budgets and the log are the same
// as chat's, through routeModelCall.

export interface CostInput {
  provider: string;
  model: string | null;
  /** The JSON body, or the text fields of a multipart body. */
  request: Record<string, unknown>;
  /** The JSON reply; undefined for a binary reply. */
  reply: unknown;
  principal: Principal;
  /** Prices the operator set on the virtual key and the workspace. */
  operator: OperatorPrices;
}

/** What is known of a request before its call, to bound its cost. */
export interface BoundInput {
  provider: string;
  model: string | null;
  request: Record<string, unknown>;
  /** Uploaded files of a multipart body: how many, and their bytes. */
  files: { count: number; bytes: number };
  operator: OperatorPrices;
}

export interface PassthroughSpec {
  /** `none` sends no body; `body` relays the client's JSON or multipart body. */
  request: 'none' | 'body';
  /** Multipart is the only form the OpenAI API takes for this operation. */
  multipartOnly?: boolean;
  /** `binary` replies are streamed through whatever their type; otherwise JSON is read, anything else streamed. */
  reply?: 'json' | 'binary';
  validate?: (body: Record<string, unknown>) => void;
  cost?: (input: CostInput) => Costing | null | Promise<Costing | null>;
  /**
   * The most the call can cost, reserved on every budget before it (null: the model has no price, refused
   * under a budget). Operations charged per call have one; the reservation is settled to `cost`.
   */
  maxCost?: (input: BoundInput) => number | null;
  /** Multipart fields sent instead of the client's, and the client's reply made from the provider's. */
  reshape?: {
    fields(): Record<string, string>;
    reply(fields: Record<string, unknown>, reply: unknown): { contentType: string; body: string };
  };
}

// Client headers the upstream needs to understand the request.
const PASSED_REQUEST_HEADERS = ['openai-beta'];
// Upstream reply headers a binary download keeps.
const PASSED_BINARY_HEADERS = ['content-disposition'];

export const str = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

/** Each named field a non-empty string, or a 400 naming the first that is not. */
export function required(body: Record<string, unknown>, ...names: string[]): void {
  for (const name of names) {
    if (!str(body[name]))
      throw badRequest(`${name} is required: a non-empty string.`, name, 'missing_required_parameter');
  }
}

export const none: PassthroughSpec = { request: 'none' };
export const body: PassthroughSpec = { request: 'body' };

/** `/v1/files/{file_id}/content` with its parameters filled in, relative to a provider's `/v1` base. */
export function upstreamPath(template: string, params: Record<string, string>): string {
  return template
    .replace(/^\/v1/, '')
    .replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params[name] ?? ''));
}

/** The raw body as a Buffer, decoded from base64 once (function URLs deliver binary bodies that way). */
function rawBody(event: HttpEvent): Buffer {
  const { maxBodyBytes } = settings();
  const declared = Number(event.headers?.['content-length'] ?? 0);
  if (declared > maxBodyBytes) throw bodyTooLarge(maxBodyBytes);
  const raw = Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
  if (raw.length > maxBodyBytes) throw bodyTooLarge(maxBodyBytes);
  return raw;
}

interface ParsedRequest {
  fields: Record<string, unknown>;
  body?: string | Buffer;
  contentType?: string;
  form?: MultipartForm;
}

function parseRequest(event: HttpEvent, spec: PassthroughSpec, log: UsageLogDraft): ParsedRequest {
  const query = event.queryStringParameters ?? {};
  if (spec.request === 'none') {
    log.request = Object.keys(query).length > 0 ? { query } : null;
    return { fields: {} };
  }
  const contentType = event.headers?.['content-type'];
  if (/^multipart\/form-data/i.test(contentType ?? '')) {
    const raw = rawBody(event);
    const form = readMultipart(raw, contentType);
    log.request = {
      content_type: 'multipart/form-data',
      bytes: raw.length,
      fields: form.fields,
      files: form.files,
    };
    checkFieldLengths(form.fields);
    return { fields: form.fields, body: raw, contentType, form };
  }
  if (spec.multipartOnly) {
    throw badRequest('This operation takes a multipart/form-data body.', null, 'invalid_body');
  }
  const text = bodyText(event);
  log.request = text;
  const fields = jsonBody(text);
  log.request = fields;
  checkFieldLengths(fields);
  return { fields, body: text, contentType: 'application/json' };
}

/** The request relayed to one target: its model without `@slug/`, and the target's override_params. */
function bodyFor(
  parsed: ParsedRequest,
  target: ResolvedTarget,
  model: string | undefined,
  spec: PassthroughSpec,
): string | Buffer | undefined {
  if (parsed.body === undefined) return undefined;
  const asked = parsed.fields.model;
  if (parsed.form && spec.reshape) {
    const fields = spec.reshape.fields();
    if (model !== undefined && model !== asked) fields.model = model;
    return withFields(parsed.body as Buffer, parsed.form, fields);
  }
  if (parsed.form) {
    return model !== undefined && model !== asked
      ? replaceField(parsed.body as Buffer, parsed.form, 'model', model)
      : parsed.body;
  }
  if (model === asked && Object.keys(target.overrideParams).length === 0) return parsed.body;
  return JSON.stringify({
    ...parsed.fields,
    ...(model !== undefined ? { model } : {}),
    ...target.overrideParams,
  });
}

const filesBytes = (form: MultipartForm | undefined) =>
  (form?.files ?? []).reduce((sum, file) => sum + file.bytes, 0);

const isJson = (contentType: string) => /^application\/(.+\+)?json/i.test(contentType);

/** The handler of one passthrough operation. */
export function passthrough(spec: PassthroughSpec): OperationHandler<ModelCallState> {
  return async (event, state) => {
    const log = state.log;
    const operation = state.operation;
    if (!operation) throw internalError();
    const parsed = parseRequest(event, spec, log);
    spec.validate?.(parsed.fields);
    const askedModel = str(parsed.fields.model) ? parsed.fields.model : undefined;
    if (askedModel) log.model = askedModel;
    if (str(parsed.fields.user)) log.user = parsed.fields.user;
    log.stream = parsed.fields.stream === true || parsed.fields.stream === 'true';

    const path =
      upstreamPath(operation.path, state.params) + (event.rawQueryString ? `?${event.rawQueryString}` : '');
    const passed: Record<string, string> = {};
    for (const name of PASSED_REQUEST_HEADERS) {
      const v = state.headers[name];
      if (v !== undefined) passed[name] = v;
    }
    const attempt = (target: ResolvedTarget, model: string | undefined): Promise<CallSuccess> => {
      if (model !== undefined) log.model = model;
      return exchange(state, target, {
        method: operation.method,
        path,
        contentType: parsed.body === undefined ? undefined : parsed.contentType,
        accept: spec.reply === 'binary' ? '*/*' : 'application/json',
        body: bodyFor(parsed, target, model, spec),
        headers: passed,
        keepOpen: (contentType) => spec.reply === 'binary' || !isJson(contentType),
      });
    };
    const files = { count: parsed.form?.files.length ?? 0, bytes: filesBytes(parsed.form) };
    const maxCost = spec.maxCost;
    const { target, success } = await routeModelCall(state, askedModel, attempt, {
      maxCost: maxCost
        ? (provider, model, operator) =>
            maxCost({ provider, model: model ?? null, request: parsed.fields, files, operator })
        : undefined,
      // Embeddings count their input against tokens-per-minute limits.
      bound:
        operation.name === 'embeddings.create'
          ? { inputTokens: tokenBound(JSON.stringify(parsed.fields.input ?? '')), maxOutputTokens: 0 }
          : undefined,
    });
    const costInput = (reply: unknown): CostInput => ({
      provider: target.provider.name,
      model: log.model,
      request: parsed.fields,
      reply,
      principal: state.principal,
      operator: log.operatorPrices,
    });

    if (success.replyText !== undefined) {
      log.response = success.reply;
      const replyModel = (success.reply as { model?: unknown } | null)?.model;
      if (!log.model && str(replyModel)) log.model = replyModel;
      const costing = await spec.cost?.(costInput(success.reply));
      if (costing) {
        log.usage = costing.usage;
        log.cost = costing.cost;
      }
      const reshaped = parsed.form && spec.reshape?.reply(parsed.fields, success.reply);
      return {
        statusCode: success.status,
        headers: { 'content-type': reshaped ? reshaped.contentType : 'application/json', ...success.headers },
        body: reshaped ? reshaped.body : success.replyText,
      };
    }

    const headers: Record<string, string> = {
      'content-type': success.contentType || 'application/octet-stream',
      ...success.headers,
    };
    for (const name of PASSED_BINARY_HEADERS) {
      const v = success.upstream.headers[name];
      if (typeof v === 'string') headers[name] = v;
    }
    return {
      statusCode: success.status,
      headers,
      body: relayBytes(success.upstream, success.contentType, log, success.sentAt, async () => {
        const costing = await spec.cost?.(costInput(undefined));
        if (costing) {
          log.usage = costing.usage;
          log.cost = costing.cost;
        }
      }),
    };
  };
}

/**
 * Forwards a binary (or any non-JSON) reply chunk by chunk as it arrives. A reply cut by the provider
 * is logged as failed and the transfer is cut too, so the client never takes a partial body for whole.
 */
async function* relayBytes(
  upstream: UpstreamResponse,
  contentType: string,
  log: UsageLogDraft,
  sentAt: number,
  onComplete: () => Promise<void>,
): AsyncGenerator<Buffer> {
  let bytes = 0;
  try {
    for await (const chunk of upstream.body) {
      bytes += chunk.length;
      yield chunk;
    }
    await onComplete();
  } catch (error) {
    if (error instanceof ClientGoneError) return;
    const failure = streamFailed(error);
    log.effectiveStatus = failure.status;
    log.error = { message: failure.message, type: failure.type, code: failure.code, origin: failure.origin };
    throw failure;
  } finally {
    log.upstreamLatencyMs = performance.now() - sentAt;
    log.response = { content_type: contentType || null, bytes };
  }
}

/**
 * The handlers of a function group's forwarded operations, by operation name, for its dispatch table. Each
 * group keeps its own specs (media-passthrough.ts, files-passthrough.ts, responses.ts), so that a function
 * bundles only the pricing and checks of the operations it serves.
 */
export function passthroughOperations<const S extends Record<string, PassthroughSpec>>(
  specs: S,
): { [K in keyof S]: OperationHandler<ModelCallState> } {
  const table: Record<string, OperationHandler<ModelCallState>> = {};
  for (const [name, spec] of Object.entries(specs)) table[name] = passthrough(spec);
  return table as { [K in keyof S]: OperationHandler<ModelCallState> };
}
