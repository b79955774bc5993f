// `npm run schema:print`: rewrites the checked-in schema from the code (a test fails when it is stale).
import fs from 'node:fs/promises';
import { SCHEMA_FILE, printedSchema } from '../graphql/print.ts';

await fs.writeFile(SCHEMA_FILE, printedSchema());
process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
