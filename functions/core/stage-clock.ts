// Where a request's time goes, by stage: CPU time (`process.cpuUsage()`, every thread of the process, so
// the embedded DynamoDB's work counts in the stage that waited for it) and wall time between marks.
// Off unless `GATEWAY_STAGE_TIMING=1` (the bench sets it): each mark then only reads the setting. Stages
// follow each other, so the figures only mean something for requests served one at a time.

import { settings } from './settings';

export const STAGES = [
  'event build',
  'middleware chain',
  'auth',
  'handler',
  'plan',
  'reserve',
  'upstream I/O',
  'relay',
  'log write / settle',
] as const;
export type Stage = (typeof STAGES)[number];

export interface StageTotal {
  cpuUs: number;
  wallMs: number;
}

const totals = new Map<Stage, StageTotal>();
let current: { stage: Stage; cpu: NodeJS.CpuUsage; at: number } | undefined;

/** Ends the stage under way (if any) and starts `stage`; null ends it without starting another. */
export function markStage(stage: Stage | null): void {
  if (!settings().stageTiming) return;
  const at = performance.now();
  const cpu = process.cpuUsage();
  if (current) {
    const total = totals.get(current.stage) ?? { cpuUs: 0, wallMs: 0 };
    total.cpuUs += cpu.user - current.cpu.user + cpu.system - current.cpu.system;
    total.wallMs += at - current.at;
    totals.set(current.stage, total);
  }
  current = stage === null ? undefined : { stage, cpu, at };
}

/** What each stage took since the last call, and starts counting again. */
export function takeStageTotals(): Map<Stage, StageTotal> {
  const taken = new Map(totals);
  totals.clear();
  return taken;
}
