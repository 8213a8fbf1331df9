// JSON text fields of stored records (policies, operator prices), parsed once per record object rather than
// on every request: records read through a per-container cache stay the same object until they change.
// What it answers is shared: read it, never change it.

const parsed = new WeakMap<object, Map<string, unknown>>();

/** `record[field]` parsed from JSON, or undefined when the record or the text is missing. */
export function parsedField<T>(record: object | undefined, field: string): T | undefined {
  const text = (record as Record<string, unknown> | undefined)?.[field];
  if (!record || typeof text !== 'string' || text === '') return undefined;
  let fields = parsed.get(record);
  if (!fields) {
    fields = new Map();
    parsed.set(record, fields);
  }
  if (!fields.has(field)) fields.set(field, JSON.parse(text));
  return fields.get(field) as T;
}
