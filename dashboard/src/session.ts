// The key lives only in this tab's sessionStorage: closing the tab signs out, and no other tab,
// cookie or server ever sees it.

export interface Session {
  base: string;
  key: string;
}

const STORAGE_KEY = 'gateway-dashboard-session';

export function loadSession(): Session | null {
  try {
    const value = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Partial<Session> | null;
    return value && typeof value.base === 'string' && typeof value.key === 'string'
      ? { base: value.base, key: value.key }
      : null;
  } catch {
    return null;
  }
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}

export function clearSession(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}

/** The API beside the page: the same base URL serves `/dashboard` and `/v1`. */
export function defaultBase(): string {
  return `${location.origin}/v1`;
}
