import { schema } from '../graphql/schema.ts';
import { VERSION } from '../version.ts';
import { buildOpenApiDocument } from './openapi.ts';

/** Where the OpenAPI document is checked in, relative to the project root. */
export const OPENAPI_FILE = 'schema/openapi.json';

export function printedOpenApi(): string {
  return `${JSON.stringify(buildOpenApiDocument(schema, VERSION), null, 2)}\n`;
}
