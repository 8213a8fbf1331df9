// `npx tsx scripts/trim-openai-openapi.ts <openapi.json> <commit>`: vendors the part of OpenAI's published
// OpenAPI document (github.com/openai/openai-openapi, MIT) that the conformance test validates the
// gateway's own bodies against: the root schemas below and every schema they reference.
import { readFileSync, writeFileSync } from 'node:fs';

const ROOTS = [
  'CreateChatCompletionResponse',
  'CreateChatCompletionStreamResponse',
  'ErrorResponse',
  'ListModelsResponse',
  'Model',
  'ResponseErrorEvent',
  'CreateTranslationResponseJson',
];

const [source, commit] = process.argv.slice(2);
if (!source || !commit) throw new Error('usage: trim-openai-openapi.ts <openapi.json> <commit>');
const doc = JSON.parse(readFileSync(source, 'utf8')) as { components: { schemas: Record<string, unknown> } };
const all = doc.components.schemas;
const kept: Record<string, unknown> = {};
const visit = (name: string) => {
  if (kept[name] !== undefined) return;
  kept[name] = all[name];
  for (const m of JSON.stringify(all[name]).matchAll(/"#\/components\/schemas\/([^"]+)"/g))
    visit(m[1] as string);
};
for (const root of ROOTS) visit(root);

// OpenAPI 3.0's `nullable`, still used in places of this 3.1 document, as the JSON Schema it means.
const nullable = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(nullable);
  if (!node || typeof node !== 'object') return node;
  const { nullable: isNullable, ...rest } = node as Record<string, unknown>;
  const inner = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, nullable(v)]));
  return isNullable === true ? { anyOf: [inner, { type: 'null' }] } : inner;
};
for (const name of Object.keys(kept)) kept[name] = nullable(kept[name]);
const out = {
  'x-source': `https://github.com/openai/openai-openapi (MIT), openapi.json at ${commit}, trimmed to ${ROOTS.join(', ')}`,
  components: { schemas: Object.fromEntries(Object.entries(kept).sort(([a], [b]) => a.localeCompare(b))) },
};
writeFileSync('test/support/openapi/openai-schemas.json', `${JSON.stringify(out, null, 1)}\n`);
console.log(`${Object.keys(kept).length} schemas`);
