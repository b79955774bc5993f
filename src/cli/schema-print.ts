// `npm run schema:print`: rewrites the checked-in GraphQL schema and OpenAPI document from the code
// (tests fail when either is stale).
import fs from 'node:fs/promises';
import { SCHEMA_FILE, printedSchema } from '../graphql/print.ts';
import { OPENAPI_FILE, printedOpenApi } from '../rest/print.ts';

await fs.writeFile(SCHEMA_FILE, printedSchema());
await fs.writeFile(OPENAPI_FILE, printedOpenApi());
process.stdout.write(`wrote ${SCHEMA_FILE} and ${OPENAPI_FILE}\n`);
