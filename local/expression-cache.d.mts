/** A PEG parser module of dynalite (`parse(expression, { context })`). */
export interface ExpressionParser {
  parse(expression: string, options: { context: object }): unknown;
}

/** Wraps the parser's `parse` so each expression shape is parsed once. */
export function cacheParses<P extends ExpressionParser>(parser: P): P;
