import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirInUseError, lockDataDir } from '../../local/data-dir-lock';

const dirs: string[] = [];
const newDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-lock-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('data dir lock', () => {
  it('refuses a second holder, naming the first; release lets the next one in', () => {
    const dir = newDir();
    const release = lockDataDir(dir);
    expect(readFileSync(join(dir, 'gateway.pid'), 'utf8')).toBe(String(process.pid));
    expect(() => lockDataDir(dir)).toThrow(DataDirInUseError);
    expect(() => lockDataDir(dir)).toThrow(`data dir ${dir} is in use by process ${process.pid}`);
    release();
    expect(existsSync(join(dir, 'gateway.pid'))).toBe(false);
    lockDataDir(dir)();
  });

  it('takes over a lock left by a process that is gone, or a lock file that holds no pid', () => {
    const dir = newDir();
    const gone = spawnSync(process.execPath, ['-e', '0']).pid as number;
    writeFileSync(join(dir, 'gateway.pid'), String(gone));
    const release = lockDataDir(dir);
    expect(readFileSync(join(dir, 'gateway.pid'), 'utf8')).toBe(String(process.pid));
    release();
    writeFileSync(join(dir, 'gateway.pid'), 'garbage');
    lockDataDir(dir)();
  });
});
