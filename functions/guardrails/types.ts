// Guardrails: checks run on what goes to a provider (input) and what comes back (output).

export type GuardrailAction = 'deny' | 'log' | 'redact';
export type Direction = 'input' | 'output';

/** A span of the checked text a check points at (what `redact` replaces). */
export interface Finding {
  start: number;
  end: number;
  label: string;
}

export interface CheckVerdict {
  passed: boolean;
  /** Why it failed, in a few words; never the matched text itself. */
  message?: string;
  findings?: Finding[];
}

export interface ModerationResult {
  flagged: boolean;
  categories: string[];
}

export interface CheckContext {
  direction: Direction;
  /** The model of the request, for model checks. */
  model?: string;
  /** The provider's moderation endpoint, bound to the request's target. */
  moderate?: (text: string) => Promise<ModerationResult>;
}

/** One kind of check. Adding a check is adding a file that exports one of these, and listing it. */
export interface GuardrailCheck<P = unknown> {
  type: string;
  /**
   * Loads, once, a heavy engine that `parse` needs (kept out of the cold start: only configs that name the
   * check pay for it). `prepareChecks` calls it before any list naming the check is compiled.
   */
  load?(): Promise<void>;
  /** Validates the check's parameters once, when the config is read; pushes every problem found. */
  parse(params: Record<string, unknown>, problems: string[], at: string): P;
  run(text: string, params: P, context: CheckContext): CheckVerdict | Promise<CheckVerdict>;
  /** Whether its findings are spans of text that `redact` can replace. */
  redacts: boolean;
}
