// The README's table of REST routes is read by people choosing a route; the route table
// (src/rest/routes.ts) is what is served. Every route served is in the README, as served.
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { ROUTES } from '../../src/rest/routes.ts';

it("lists every REST route in the README's table, with its method, path and status, and no route that is not served", async () => {
  const readme = await fs.readFile(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## The REST API\n'), readme.indexOf('\n### Paging\n'));
  const listed = [...section.matchAll(/^\| (GET|POST|PUT|PATCH|DELETE) \| `([^`]+)` \| (\d{3})/gm)].map(([, method, route, status]) =>
    [method, route, Number(status)].join(' '),
  );
  expect(listed.sort()).toEqual(ROUTES.map((route) => [route.method, route.path, route.status].join(' ')).sort());
});
