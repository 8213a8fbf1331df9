import { GatewayError } from '../core/errors';
import { CHECKS } from './registry';
import type {
  CheckContext,
  CheckVerdict,
  Direction,
  Finding,
  GuardrailAction,
  GuardrailCheck,
} from './types';

const ACTIONS: GuardrailAction[] = ['deny', 'log', 'redact'];
const RESERVED = new Set(['type', 'action', 'id']);

/** A check ready to run: its parameters validated and compiled once. */
export interface CompiledCheck {
  id: string;
  type: string;
  action: GuardrailAction;
  check: GuardrailCheck<unknown>;
  params: unknown;
}

export interface CheckOutcome {
  id: string;
  type: string;
  action: GuardrailAction;
  passed: boolean;
  message?: string;
  /** How many spans it found (and, with `redact`, replaced). */
  findings: number;
  duration_ms: number;
}

export interface GuardrailReport {
  direction: Direction;
  /** False when a `deny` check failed. */
  passed: boolean;
  outcomes: CheckOutcome[];
  /** The checked text segments, after any redaction. */
  segments: string[];
  redacted: boolean;
}

const LAZY = [...CHECKS.values()].filter((c) => c.load);
const loaded = new Set<string>();

/**
 * Loads the engines of the checks named anywhere in `value` (a config, a list of checks): call it before
 * compiling them. Free once every engine is loaded; a name that merely appears only loads an engine early.
 */
export async function prepareChecks(value: unknown): Promise<void> {
  if (value === undefined || loaded.size === LAZY.length) return;
  const json = JSON.stringify(value);
  for (const check of LAZY) {
    if (loaded.has(check.type) || !json.includes(`"${check.type}"`)) continue;
    await check.load?.();
    loaded.add(check.type);
  }
}

/**
 * Validates a list of checks (`{type, action?, id?, ...params}`) and compiles them, pushing every problem
 * into `problems` so a config error lists them all.
 */
export function compileChecks(list: unknown, at: string, problems: string[]): CompiledCheck[] {
  if (!Array.isArray(list)) {
    problems.push(`${at} must be an array of checks`);
    return [];
  }
  const compiled: CompiledCheck[] = [];
  list.forEach((entry, i) => {
    const where = `${at}[${i}]`;
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) {
      problems.push(`${where} must be a check object`);
      return;
    }
    const raw = entry as Record<string, unknown>;
    const check = typeof raw.type === 'string' ? CHECKS.get(raw.type) : undefined;
    if (!check) {
      problems.push(`${where}.type must be one of ${[...CHECKS.keys()].join(', ')}`);
      return;
    }
    const action = (raw.action === undefined ? 'deny' : raw.action) as GuardrailAction;
    if (!ACTIONS.includes(action)) {
      problems.push(`${where}.action must be "deny", "log" or "redact"`);
      return;
    }
    if (action === 'redact' && !check.redacts) {
      problems.push(`${where}: a ${check.type} check finds no text to redact; use "deny" or "log"`);
      return;
    }
    // Ids travel in the x-gateway-guardrails reply header, so they keep to header-safe characters.
    if (raw.id !== undefined && (typeof raw.id !== 'string' || !/^[\w.-]{1,64}$/.test(raw.id))) {
      problems.push(`${where}.id must be 1 to 64 letters, digits, dots, dashes or underscores`);
    }
    const params = Object.fromEntries(Object.entries(raw).filter(([k]) => !RESERVED.has(k)));
    compiled.push({
      id: typeof raw.id === 'string' && raw.id ? raw.id : `${check.type}-${i}`,
      type: check.type,
      action,
      check,
      params: check.parse(params, problems, where),
    });
  });
  return compiled;
}

function replaceFindings(text: string, findings: Finding[]): string {
  let out = text;
  for (const f of [...findings].sort((a, b) => b.start - a.start)) {
    out = `${out.slice(0, f.start)}[REDACTED_${f.label}]${out.slice(f.end)}`;
  }
  return out;
}

async function verdictOf(c: CompiledCheck, text: string, context: CheckContext): Promise<CheckVerdict> {
  try {
    return await c.check.run(text, c.params, context);
  } catch (error) {
    // A request the gateway refuses (a stored credential with a custom host, a refused address) stays a 400.
    if (error instanceof GatewayError && error.status === 400) throw error;
    // A check that cannot decide fails: a guardrail that silently passes would be worse.
    return { passed: false, message: `the check could not run: ${(error as Error).message}` };
  }
}

/**
 * Runs the checks in order over the text segments (messages, or an output). `redact` checks replace
 * their findings in each segment, and later checks see the redacted text; the others judge the segments
 * joined, as one text.
 */
export async function runChecks(
  checks: CompiledCheck[],
  segments: string[],
  context: CheckContext,
): Promise<GuardrailReport> {
  let current = segments;
  let redacted = false;
  const outcomes: CheckOutcome[] = [];
  for (const c of checks) {
    const started = performance.now();
    let passed = true;
    let message: string | undefined;
    let findings = 0;
    if (c.action === 'redact') {
      const next: string[] = [];
      for (const segment of current) {
        const verdict = await verdictOf(c, segment, context);
        const spans = verdict.findings ?? [];
        findings += spans.length;
        next.push(spans.length > 0 ? replaceFindings(segment, spans) : segment);
        if (!verdict.passed) message ??= verdict.message;
      }
      if (findings > 0) {
        redacted = true;
        current = next;
      }
      passed = findings === 0;
    } else {
      const verdict = await verdictOf(c, current.join('\n'), context);
      passed = verdict.passed;
      message = verdict.message;
      findings = verdict.findings?.length ?? 0;
    }
    outcomes.push({
      id: c.id,
      type: c.type,
      action: c.action,
      passed,
      ...(message && !passed ? { message } : {}),
      findings,
      duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
    });
  }
  const passed = outcomes.every((o) => o.passed || o.action !== 'deny');
  return { direction: context.direction, passed, outcomes, segments: current, redacted };
}

/** The message a `deny` ends a request or a response with: every failed check, with why. */
export function denialMessage(direction: Direction, report: GuardrailReport): string {
  const failed = report.outcomes.filter((o) => !o.passed && o.action === 'deny');
  const list = failed.map((o) => `${o.id} (${o.type}${o.message ? `: ${o.message}` : ''})`).join('; ');
  return `The ${direction} was blocked by guardrails: ${list}.`;
}
