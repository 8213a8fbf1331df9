import { badRequest, bodyTooLarge } from './errors';
import type { HttpEvent } from './http';

// Below the 6 MB function URL payload limit, so that an oversized body still reaches us and is logged.
export const MAX_BODY_BYTES = Number(process.env.GATEWAY_MAX_BODY_BYTES ?? 5_000_000);

/** The raw body text, refusing bodies over the limit (by declared length or by what arrived). */
export function bodyText(event: HttpEvent): string {
  const declared = Number(event.headers?.['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) throw bodyTooLarge(MAX_BODY_BYTES);
  const body = event.body ?? '';
  const text = event.isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
  if (Buffer.byteLength(text) > MAX_BODY_BYTES) throw bodyTooLarge(MAX_BODY_BYTES);
  return text;
}

/** Parses a JSON object body; 400 for anything else. */
export function jsonBody(text: string): Record<string, unknown> {
  if (text.trim() === '')
    throw badRequest('The request body is empty; a JSON object is expected.', null, 'invalid_json');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw badRequest(`The request body is not valid JSON: ${(error as Error).message}`, null, 'invalid_json');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest('The request body must be a JSON object.', null, 'invalid_json');
  }
  return value as Record<string, unknown>;
}
