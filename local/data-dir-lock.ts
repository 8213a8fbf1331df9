import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const LOCK_FILE = 'gateway.pid';

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`data dir ${dataDir} is in use by process ${pid}; stop it, or set GATEWAY_DATA_DIR to another dir`);
    this.name = 'DataDirInUseError';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else; it still holds the dir.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the data dir for this process: a lock file holding our pid, created exclusively. A lock left by
 * a process that no longer runs is stale and taken over. Returns the release, which is idempotent.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, LOCK_FILE);
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let holder = Number.NaN;
    try {
      holder = Number(readFileSync(file, 'utf8').trim());
    } catch {
      // Removed between our two calls: try again.
      continue;
    }
    if (Number.isInteger(holder) && holder > 0 && alive(holder)) throw new DataDirInUseError(dataDir, holder);
    try {
      unlinkSync(file);
    } catch {
      // Another start removed the stale lock first; the next attempt decides.
    }
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    try {
      if (readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file);
    } catch {
      // Already gone.
    }
  };
  process.once('exit', release);
  return () => {
    process.off('exit', release);
    release();
  };
}
