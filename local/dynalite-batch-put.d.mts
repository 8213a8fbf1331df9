/** The puts of a BatchWriteItem that dynalite's type check would leave unchanged: one table, puts only. */
export interface PlainPuts {
  table: string;
  requests: Array<{ PutRequest: { Item: Record<string, unknown> } }>;
}

/** The puts of the call when it has that shape, else undefined. */
export function plainPuts(data: unknown): PlainPuts | undefined;

/** dynalite's BatchWriteItem for those puts, after its validations; `done` gets its error or reply. */
export function batchPut(
  store: unknown,
  data: unknown,
  puts: PlainPuts,
  done: (error: (Error & { statusCode?: number; body?: unknown }) | null, result?: unknown) => void,
): void;
