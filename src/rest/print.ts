import { schema } from '../graphql/schema.ts';
import { VERSION } from '../version.ts';
import { buildOpenApiDocument } from './openapi.ts';

/** Where the OpenAPI document is checked in, relative to the project root. */
export const OPENAPI_FILE = 'schema/openapi.json';

/** The checked-in copy names the default address, so it does not change with where it was printed; the served one names PUBLIC_URL. */
export const PRINTED_PUBLIC_URL = 'http://localhost:4000';

export function printedOpenApi(): string {
  return `${JSON.stringify(buildOpenApiDocument(schema, VERSION, PRINTED_PUBLIC_URL), null, 2)}\n`;
}
