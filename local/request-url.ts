/**
 * The URL of a request as the server received it, or undefined when it cannot be one (`//`, `//[`):
 * a path is read as a path, never as `//host/...`, and nothing a client sends can make it throw.
 */
export function requestUrl(raw: string | undefined): URL | undefined {
  const target = raw ?? '/';
  try {
    return target.startsWith('/')
      ? new URL(`http://localhost${target}`)
      : new URL(target, 'http://localhost');
  } catch {
    return undefined;
  }
}
