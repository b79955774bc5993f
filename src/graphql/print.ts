import { printSchema } from 'graphql';
import { schema } from './schema.ts';

/** Where the printed schema is checked in, relative to the project root. */
export const SCHEMA_FILE = 'schema/schema.graphql';

export function printedSchema(): string {
  return `${printSchema(schema)}\n`;
}
