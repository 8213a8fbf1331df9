import { readdir, readFile } from 'node:fs/promises';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deploymentError, notFound } from '../core/errors';
import type { HttpResult } from '../core/http';
import { settings } from '../core/settings';
import type { OperationTable } from '../gateway/dispatch';

// Serves the web dashboard's static files (built by dashboard/build.ts). On Lambda they sit in a
// `dashboard` folder beside the bundle; locally the server builds them and names the folder.

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

// The page loads only its own files and talks to the gateway API, which may be on another origin
// (a function URL): hence `connect-src *`. Chart.js sizes its canvas through inline styles.
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
    "connect-src *; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

export interface DashboardFile {
  body: string;
  headers: Record<string, string>;
}

export function defaultDashboardDir(): string {
  return settings().dashboardDir ?? join(dirname(fileURLToPath(import.meta.url)), 'dashboard');
}

/** Reads every file once per container: a few hundred KB, served from memory afterwards. */
export class DashboardAssets {
  private files: Promise<Map<string, DashboardFile>> | undefined;

  constructor(private readonly dir: () => string = defaultDashboardDir) {}

  async get(name: string): Promise<DashboardFile | undefined> {
    this.files ??= this.load().catch((error: unknown) => {
      this.files = undefined;
      throw error;
    });
    return (await this.files).get(name);
  }

  private async load(): Promise<Map<string, DashboardFile>> {
    const dir = this.dir();
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      throw deploymentError('The dashboard files are missing from this deployment.', 'dashboard_missing');
    }
    const files = new Map<string, DashboardFile>();
    for (const name of names) {
      const type = CONTENT_TYPES[extname(name)];
      if (!type) continue;
      const isPage = name === 'index.html';
      files.set(name, {
        body: await readFile(join(dir, name), 'utf8'),
        headers: {
          'content-type': type,
          'x-content-type-options': 'nosniff',
          // The page names its scripts by content hash: it is revalidated on every visit, and they never change.
          'cache-control': isPage ? 'no-cache' : 'public, max-age=31536000, immutable',
          ...(isPage ? PAGE_HEADERS : {}),
        },
      });
    }
    return files;
  }
}

async function serve(assets: DashboardAssets, name: string): Promise<HttpResult> {
  const file = await assets.get(name);
  if (!file) throw notFound(`No dashboard file named "${name}".`);
  return { statusCode: 200, headers: file.headers, body: file.body };
}

export function dashboardOperations(assets = new DashboardAssets()): OperationTable<'dashboard'> {
  return {
    'dashboard.page': () => serve(assets, 'index.html'),
    'dashboard.asset': (_event, state) => serve(assets, state.params.asset ?? ''),
  };
}
