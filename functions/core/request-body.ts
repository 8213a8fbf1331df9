import { badRequest, bodyTooLarge, type ErrorCode } from './errors';
import type { HttpEvent } from './http';
import type { UsageLogDraft } from './log-entry';
import { settings } from './settings';

/** Deeper JSON is refused before it is parsed: every later walk over it (copies, guardrails) may recurse. */
export const MAX_JSON_DEPTH = 64;

/** Lengths past which a provider would refuse the field anyway, in characters. */
export const FIELD_LIMITS = { model: 256, user: 512, metadataValue: 512 } as const;

/** What a header value must not hold: a stored field that later becomes a header is checked when saved. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** The raw body text, refusing bodies over the limit (by declared length or by what arrived). */
export function bodyText(event: HttpEvent): string {
  // Below the 6 MB function URL payload limit, so that an oversized body still reaches us and is logged.
  const { maxBodyBytes } = settings();
  const declared = Number(event.headers?.['content-length'] ?? 0);
  if (declared > maxBodyBytes) throw bodyTooLarge(maxBodyBytes);
  const body = event.body ?? '';
  const text = event.isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
  // A UTF-16 unit is at most 3 UTF-8 bytes: only a text near the limit needs its bytes counted.
  if (text.length * 3 > maxBodyBytes && Buffer.byteLength(text) > maxBodyBytes)
    throw bodyTooLarge(maxBodyBytes);
  return text;
}

/**
 * Whether JSON text nests arrays and objects deeper than `limit`. One pass over the characters, no
 * recursion, so it is safe on any input; brackets inside strings do not count.
 */
export function jsonTooDeep(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Strings are most of a model request: jump to the closing quote with a native search.
      i = closingQuote(text, i);
      if (i < 0) return false;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** The index of the quote that closes the string opened at `open`, or -1 when it is never closed. */
function closingQuote(text: string, open: number): number {
  for (let at = text.indexOf('"', open + 1); at >= 0; at = text.indexOf('"', at + 1)) {
    // A quote after an odd run of backslashes is escaped; the run cannot pass the opening quote.
    let slashes = 0;
    while (text.charCodeAt(at - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return at;
  }
  return -1;
}

/**
 * Parses JSON text from a client, refusing nesting past {@link MAX_JSON_DEPTH} with a 400 (`what` names
 * the input in the message, `param` and `code` go to the error).
 */
export function parseClientJson(text: string, what: string, param: string | null, code: ErrorCode): unknown {
  if (jsonTooDeep(text)) {
    throw badRequest(`${what} nests arrays or objects deeper than ${MAX_JSON_DEPTH} levels.`, param, code);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badRequest(`${what} is not valid JSON: ${(error as Error).message.slice(0, 200)}`, param, code);
  }
}

/** Parses a JSON object body; 400 for anything else. */
export function jsonBody(text: string): Record<string, unknown> {
  if (text.trim() === '')
    throw badRequest('The request body is empty; a JSON object is expected.', null, 'invalid_json');
  const value = parseClientJson(text, 'The request body', null, 'invalid_json');
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest('The request body must be a JSON object.', null, 'invalid_json');
  }
  return value as Record<string, unknown>;
}

/** `model` and `user` of a model request: past their limits a 400 that names the field. */
export function checkFieldLengths(body: Record<string, unknown>): void {
  for (const field of ['model', 'user'] as const) {
    const value = body[field];
    if (typeof value === 'string' && value.length > FIELD_LIMITS[field]) {
      throw badRequest(
        `${field} is ${value.length} characters long; at most ${FIELD_LIMITS[field]} are accepted.`,
        field,
        'field_too_long',
      );
    }
  }
}

const MAX_METADATA_KEYS = 64;

/** Parses `x-gateway-metadata`: a JSON object whose values are strings. */
export function parseMetadata(header: string | undefined): Record<string, string> {
  if (header === undefined || header.trim() === '') return {};
  const value = parseClientJson(header, 'x-gateway-metadata', 'x-gateway-metadata', 'invalid_request');
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest('x-gateway-metadata must be a JSON object of string values.', 'x-gateway-metadata');
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_METADATA_KEYS) {
    throw badRequest(`x-gateway-metadata holds at most ${MAX_METADATA_KEYS} keys.`, 'x-gateway-metadata');
  }
  const bad = entries.filter(
    ([k, v]) => typeof v !== 'string' || k === '' || k.length > 128 || v.length > FIELD_LIMITS.metadataValue,
  );
  if (bad.length > 0) {
    throw badRequest(
      `x-gateway-metadata values must be strings (keys up to 128, values up to ${FIELD_LIMITS.metadataValue} characters): ${bad.map(([k]) => k.slice(0, 128)).join(', ')}.`,
      'x-gateway-metadata',
    );
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

/** JSON text parsed, or undefined when it is not JSON (an upstream reply, a stored value). */
export function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A JSON model request on its log entry: the body, then (once their lengths are checked, so an oversized
 * value never reaches the log's keys) the model, user and stream flag it names.
 */
export function logModelRequest(log: UsageLogDraft, body: Record<string, unknown>): void {
  log.request = body;
  checkFieldLengths(body);
  if (typeof body.model === 'string') log.model = body.model;
  if (typeof body.user === 'string') log.user = body.user;
  log.stream = body.stream === true;
}
