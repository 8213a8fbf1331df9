import { compileChecks, prepareChecks, runChecks } from '../../../functions/guardrails/engine';
import { CHECKS } from '../../../functions/guardrails/registry';
import type { CheckContext } from '../../../functions/guardrails/types';

// The request path loads a check's engine (RE2, the JSON Schema validator) before compiling; these
// helpers compile synchronously, so every engine is loaded once here.
await prepareChecks([...CHECKS.keys()].map((type) => ({ type })));

/** Compiles one check from its config, failing the test on config problems. */
export function compileOne(config: Record<string, unknown>) {
  const problems: string[] = [];
  const [check] = compileChecks([config], 'checks', problems);
  if (problems.length > 0 || !check) throw new Error(problems.join('; '));
  return check;
}

export function problemsOf(config: unknown): string[] {
  const problems: string[] = [];
  compileChecks([config], 'checks', problems);
  return problems;
}

/** Runs one check (action `deny` unless given) over one text. */
export async function verdict(
  config: Record<string, unknown>,
  text: string,
  context: Partial<CheckContext> = {},
) {
  const report = await runChecks([compileOne(config)], [text], { direction: 'input', ...context });
  return report.outcomes[0] as NonNullable<(typeof report.outcomes)[0]>;
}
