import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApiDocument } from '../functions/openapi/document';

// `npm run openapi`: writes the OpenAPI document the gateway serves at GET /v1/openapi.json to
// docs/openapi.json, for readers and tools that want it without a running gateway.

const target = join(import.meta.dirname, '..', 'docs', 'openapi.json');
writeFileSync(target, `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
console.log(`wrote ${target}`);
