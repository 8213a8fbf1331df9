import { createHash } from 'node:crypto';
import { badRequest } from '../core/errors';
import { newId } from '../core/ids';
import { logger } from '../core/logger';
import type { Principal } from '../core/principal';
import { type AuditEntry, AuditStore } from '../store/audit-store';
import { ControlStore } from '../store/control-store';
import { type JwtVerificationError, maskToken } from './jwt-token';
import { parseLimit } from './list-query';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const AUDIT_WINDOW_SECONDS = 60;

export function presentAuditEntry(entry: AuditEntry) {
  return { object: 'audit_log', ...entry };
}

/** The organisation's audit log: invalid JWT attempts, written by every function, read by admins. */
export class AuditLog {
  constructor(
    private readonly store = new AuditStore(),
    private readonly control = new ControlStore(),
  ) {}

  /**
   * Records an invalid JWT with the token masked. Awaited by the caller so the entry is durable before
   * the 401 leaves; a failed write is logged (without the token) and never changes the reply.
   */
  async recordInvalidJwt(
    token: string,
    error: JwtVerificationError,
    requestId?: string,
    source = 'unknown',
  ): Promise<void> {
    const entry: AuditEntry = {
      id: newId(),
      timestamp: new Date().toISOString(),
      organisation_id: error.organisationId,
      event: 'jwt.invalid',
      jwtToken: maskToken(token),
      error: error.message,
      ...(error.detail !== undefined ? { detail: error.detail } : {}),
      ...(requestId !== undefined ? { request_id: requestId } : {}),
      source,
    };
    // One entry per source, error and minute, with a count: a flood of junk tokens stays a few entries.
    const minute = Math.floor(Date.now() / (AUDIT_WINDOW_SECONDS * 1000));
    const windowKey = createHash('sha256')
      .update(`${source}\n${error.message}\n${minute}`)
      .digest('base64url');
    try {
      await this.store.putOncePerWindow(entry, windowKey, AUDIT_WINDOW_SECONDS);
    } catch (failure) {
      logger.error('audit log write failed', {
        entry: { ...entry },
        error: (failure as Error).message,
      });
    }
  }

  /**
   * Newest first. Admins of the organisation the deployment bootstrapped also see the entries no
   * organisation could be named for; both partitions are ordered by ULID, so they merge by id and the
   * cursor is simply the last id returned.
   */
  async list(
    caller: Principal,
    query: Record<string, string | undefined>,
  ): Promise<{ data: AuditEntry[]; nextCursor: string | null }> {
    const limit = parseLimit(query.limit);
    let before: string | undefined;
    if (query.cursor) {
      before = Buffer.from(query.cursor, 'base64url').toString('utf8');
      if (!ULID.test(before)) throw badRequest('cursor is not valid.', 'cursor', 'invalid_cursor');
    }
    const partitions: (string | null)[] = [caller.organisationId];
    if ((await this.control.getBootstrapOrganisationId()) === caller.organisationId) partitions.push(null);
    // One entry past the page tells whether another page exists.
    const pages = await Promise.all(partitions.map((p) => this.store.listBefore(p, before, limit + 1)));
    const merged = pages.flat().sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const data = merged.slice(0, limit);
    const last = data[data.length - 1];
    const nextCursor = merged.length > limit && last ? Buffer.from(last.id).toString('base64url') : null;
    return { data, nextCursor };
  }
}
