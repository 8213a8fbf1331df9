import { badRequest } from '../core/errors';

// Query parameters shared by every list operation.

const MAX_LIMIT = 100;
const DEFAULT_LIMIT = 20;

/** `limit`: a whole number from 1 to 100, 20 when absent. */
export function parseLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LIMIT;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw badRequest(`limit must be a whole number from 1 to ${MAX_LIMIT}.`, 'limit');
  }
  return limit;
}

/** A time bound: ISO 8601 or epoch milliseconds. */
export function parseTime(value: string | undefined, param: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms))
    throw badRequest(`${param} must be an ISO 8601 time or epoch milliseconds.`, param);
  return ms;
}
