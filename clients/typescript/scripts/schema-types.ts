/**
 * The client's schema types, generated from `openapi.yaml`'s `components.schemas` by
 * json-schema-to-typescript (OpenAPI 3.1 schemas are JSON Schema 2020-12). `npm run
 * client:types` writes them to `src/openapi-schemas.ts`; `npm test` generates them again and
 * fails when the file differs (`test/clients/`). The generators made for whole OpenAPI documents
 * (openapi-typescript, @hey-api/openapi-ts) need TypeScript's JavaScript API, which the
 * TypeScript 7 this project compiles with no longer has.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { compile } from 'json-schema-to-typescript';

const repositoryRoot = join(import.meta.dirname, '..', '..', '..');
export const schemaTypesPath = join(import.meta.dirname, '..', 'src', 'openapi-schemas.ts');

/** The generated module's text. */
export async function generateSchemaTypes(): Promise<string> {
  const document = load(readFileSync(join(repositoryRoot, 'openapi.yaml'), 'utf8')) as {
    components: { schemas: Record<string, unknown> };
  };
  const { schemas } = document.components;
  const definitions = JSON.parse(
    JSON.stringify(schemas).replaceAll('#/components/schemas/', '#/$defs/'),
  ) as Record<string, unknown>;
  const root = {
    title: 'PlantStoreSchemas',
    type: 'object' as const,
    properties: Object.fromEntries(
      Object.keys(schemas).map((name) => [name, { $ref: `#/$defs/${name}` }]),
    ),
    additionalProperties: false,
    $defs: definitions,
  };
  const types = await compile(root, 'PlantStoreSchemas', {
    bannerComment:
      '/* Generated from openapi.yaml by json-schema-to-typescript (npm run client:types): do not edit. */',
    additionalProperties: false,
    unreachableDefinitions: true,
  });
  return types;
}

if (process.argv[1] === import.meta.filename) {
  writeFileSync(schemaTypesPath, await generateSchemaTypes());
  process.stdout.write(`Wrote ${schemaTypesPath}\n`);
}
