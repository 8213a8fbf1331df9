import { afterEach, beforeEach, vi } from 'vitest';
import { logger } from '../../functions/core/logger';

/**
 * Collects the operational log lines (Powertools JSON) written during each test of the calling file, at
 * level WARN and above; anything else written to stdout or stderr is let through. The array is emptied
 * before each test.
 */
export function captureLogLines(): Array<Record<string, unknown>> {
  const lines: Array<Record<string, unknown>> = [];
  beforeEach(() => {
    lines.length = 0;
    logger.setLogLevel('WARN');
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
      vi.spyOn(stream, 'write').mockImplementation((chunk: unknown, ...rest: unknown[]) => {
        const text = String(chunk);
        if (text.startsWith('{"level"')) lines.push(JSON.parse(text));
        else write(chunk, ...rest);
        return true;
      });
    }
  });
  afterEach(() => {
    vi.restoreAllMocks();
    logger.setLogLevel('ERROR');
  });
  return lines;
}
