// `npm run schema:print`: rewrites the checked-in GraphQL schema and OpenAPI document from the code;
// with `--check`, writes nothing and exits 1 if either is stale (`npm test` runs it so).
import fs from 'node:fs/promises';
import { commandLine, usageError } from './command-line.ts';
import { SCHEMA_FILE, printedSchema } from '../graphql/print.ts';
import { OPENAPI_FILE, printedOpenApi } from '../rest/print.ts';

const USAGE = 'usage: npm run schema:print [-- --check]';
const { values, positionals } = commandLine(USAGE, { check: { type: 'boolean', default: false } });
// `check` without its dashes must not rewrite what it was meant to check.
if (positionals.length > 0) usageError(USAGE, `unexpected argument "${positionals[0]}"`);
const printed = { [SCHEMA_FILE]: printedSchema(), [OPENAPI_FILE]: printedOpenApi() };

if (values.check) {
  const stale: string[] = [];
  for (const [file, text] of Object.entries(printed)) {
    if ((await fs.readFile(file, 'utf8').catch(() => '')) !== text) stale.push(file);
  }
  if (stale.length > 0) {
    process.stderr.write(`${stale.join(' and ')} ${stale.length > 1 ? 'are' : 'is'} stale: run \`npm run schema:print\`.\n`);
    process.exit(1);
  }
  process.stdout.write(`${Object.keys(printed).join(' and ')} are up to date\n`);
} else {
  for (const [file, text] of Object.entries(printed)) await fs.writeFile(file, text);
  process.stdout.write(`wrote ${Object.keys(printed).join(' and ')}\n`);
}
