// GraphQL shape and cost limits: a document over any of them is refused with QUERY_TOO_COMPLEX, saying
// which limit and by how much, before a single SQL statement runs; with one rule for its status, GraphQL
// over HTTP's for a document that does not validate: 400 to `application/graphql-response+json`, 200
// (the errors, no data) to `application/json`.
import { getIntrospectionQuery, parse, type OperationDefinitionNode } from 'graphql';
import { schema } from '../../src/graphql/schema.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { expandedFieldCount, operationCost, queryCost } from '../../src/plugins/query-limits.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const LIMITS = { maxDepth: 5, maxAliases: 3, maxTokens: 120, maxDirectives: 2, maxCost: 500 };
const USER = 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m';
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ queryLimits: LIMITS });
});
afterAll(() => server.close());

async function expectRefused(query: string, message: RegExp, variables?: Record<string, unknown>) {
  server.statements.length = 0;
  const legacy = await server.gql(query, variables, { accept: 'application/json' });
  expect([legacy.status, legacy.headers.get('content-type'), legacy.body.data]).toEqual([
    200,
    'application/json; charset=utf-8',
    undefined,
  ]);
  expect(legacy.body.errors![0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
  const response = await server.gql(query, variables);
  expect(response.status, JSON.stringify(response.body)).toBe(400);
  expect(response.body.data).toBeUndefined();
  const error = response.body.errors![0]!;
  expect(error.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', type: 'https://portico.dev/problems/query-too-complex' });
  expect(error.message).toMatch(message);
  expect(error.message).not.toContain('Syntax Error');
  // Only the API key lookup (no key cache in tests) may have touched the database.
  expect(
    server.statements.filter((sql) => !sql.includes('api_keys')),
    'SQL ran for a refused document',
  ).toEqual([]);
}

async function expectAccepted(query: string, variables?: Record<string, unknown>) {
  const response = await server.gql(query, variables);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(response.body.errors).toBeUndefined();
}

describe('shape limits', () => {
  it('depth: at the limit runs, one level deeper is refused', async () => {
    await expectAccepted(`{ user(id: "${USER}") { orders { user { orders { id } } } } }`);
    await expectRefused(
      `{ user(id: "${USER}") { orders { user { orders { user { id } } } } } }`,
      /^Query depth limit of 5 exceeded, found 6\.$/,
    );
  });

  it('depth counts fields, not the fragments that hold them: a Relay-style document of nested fragments runs', async () => {
    // Three fields deep, each behind a fragment spread or an inline fragment.
    await expectAccepted(
      `query { ...Q } fragment Q on Query { user(id: "${USER}") { ...U } } fragment U on User { ... on User { orders { ...O } } } fragment O on Order { id }`,
    );
    // Fields behind fragments still count: six deep is refused, as written out plainly.
    await expectRefused(
      `query { ...Q } fragment Q on Query { user(id: "${USER}") { ...U } } fragment U on User { orders { user { ... on User { orders { user { id } } } } } }`,
      /^Query depth limit of 5 exceeded, found 6\.$/,
    );
  });

  it('aliases: at the limit runs, one more is refused', async () => {
    await expectAccepted(`{ a: user(id: "${USER}") { id } b: user(id: "${USER}") { id } c: user(id: "${USER}") { id } }`);
    await expectRefused(
      `{ a: user(id: "${USER}") { id } b: user(id: "${USER}") { id } c: user(id: "${USER}") { id } d: user(id: "${USER}") { id } }`,
      /^Aliases limit of 3 exceeded, found 4\.$/,
    );
    // A fragment's aliases count wherever it is spread; aliases of __typename cost nothing and count for nothing.
    await expectRefused(
      `query { a: user(id: "${USER}") { ...F } b: user(id: "${USER}") { ...F } } fragment F on User { x: id }`,
      /^Aliases limit of 3 exceeded, found 4\.$/,
    );
    await expectAccepted(`{ t1: __typename t2: __typename t3: __typename t4: __typename }`);
  });

  it('directives: at the limit runs, one more is refused', async () => {
    await expectAccepted(`{ user(id: "${USER}") { id @include(if: true) name @skip(if: false) } }`);
    await expectRefused(
      `{ user(id: "${USER}") { id @include(if: true) name @skip(if: false) email @include(if: true) } }`,
      /^Directives limit of 2 exceeded, found 3\.$/,
    );
  });

  it('tokens: a document over the token limit is refused while parsing', async () => {
    const fields = Array.from({ length: 150 }, () => 'id').join(' ');
    await expectRefused(`{ user(id: "${USER}") { ${fields} } }`, /^Token limit of 120 exceeded\.$/);
  });

  it('field merging: a field repeated more often than validation will compare is refused as a limit, saying so', async () => {
    const defaults = await startTestServer();
    try {
      const response = await defaults.gql(`{ ${'rateLimit { cost } '.repeat(600)}}`);
      expect(response.status).toBe(400);
      expect(response.body.errors?.map((error) => [error.message, error.extensions.code])).toEqual([
        [
          'Validation limit exceeded: the document repeats fields or fragments more often than can be checked; select each field once.',
          'QUERY_TOO_COMPLEX',
        ],
      ]);
    } finally {
      await defaults.close();
    }
  });

  it("introspection: nested past graphql-js's own bound, it is refused as a limit too", async () => {
    await expectRefused(
      '{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }',
      /^Maximum introspection depth exceeded$/,
    );
  });
});

describe('fragments that make a small document a vast one', () => {
  it('answers fragments that each spread the next one twice as execution collects them, once (graphql-jit walked every path: 2^40 here)', async () => {
    const defaults = await startTestServer();
    try {
      const user = await defaults.gql('mutation { createUser(input: { name: "Chain", email: "chain@example.com" }) { id } }');
      const id = (user.body.data as { createUser: { id: string } }).createUser.id;
      let fragments = '';
      for (let i = 0; i < 40; i++) fragments += `fragment F${i} on User { id ...F${i + 1} ...F${i + 1} } `;
      fragments += 'fragment F40 on User { name }';
      const read = await defaults.gql(`{ user(id: "${id}") { ...F0 } } ${fragments}`);
      expect(read.body).toEqual({ data: { user: { id, name: 'Chain' } } });
    } finally {
      await defaults.close();
    }
  });

  it('refuses fragments that each spread every one before them, whose fields written out are more than the token limit allows', async () => {
    const defaults = await startTestServer();
    try {
      let fragments = 'fragment G0 on User { id } ';
      for (let i = 1; i < 16; i++) {
        fragments += `fragment G${i} on User { id ${Array.from({ length: i }, (_, j) => `...G${j}`).join(' ')} } `;
      }
      const document = `{ user(id: "${USER}") { ...G15 } } ${fragments}`;
      // 2^15 fields written out, in a few hundred tokens.
      expect(expandedFieldCount(parse(document), 1e9)).toBe(2 ** 15 + 1);
      defaults.statements.length = 0;
      const refused = await defaults.gql(document);
      expect([refused.status, refused.body.data, refused.body.errors?.map((error) => error.extensions.code)]).toEqual([
        400,
        undefined,
        ['QUERY_TOO_COMPLEX'],
      ]);
      expect(refused.body.errors![0]!.message).toMatch(/^Expansion limit of \d+ fields exceeded: written out where they are spread/);
      expect(defaults.statements.filter((sql) => !sql.includes('api_keys'))).toEqual([]);
    } finally {
      await defaults.close();
    }
  });
});

describe('cost', () => {
  it('weighs list fields by their page size, from literals and variables', async () => {
    await expectAccepted('{ users(first: 10) { edges { node { orders(limit: 10) { id } } } } }');
    await expectRefused(
      '{ users(first: 100) { edges { node { orders(limit: 100) { id } } } } }',
      /^Query cost limit of 500 exceeded, found 10301\.$/,
    );
    await expectRefused(
      'query ($n: Int, $m: Int) { users(first: $n) { edges { node { orders(limit: $m) { id } } } } }',
      /^Query cost limit of 500 exceeded, found 1301\.$/,
      { n: 100, m: 10 },
    );
  });

  it('weighs nothing that @skip or @include leaves out with the request’s variables, on a field or a fragment', async () => {
    const heavy = `query ($on: Boolean!) {
      users(first: 100) @include(if: $on) { edges { node { orders(limit: 100) { id } } } }
      ...Heavy @skip(if: true)
      rateLimit { cost }
    }
    fragment Heavy on Query { again: users(last: 100) { edges { node { orders(limit: 100) { id } } } } }`;
    await expectAccepted(heavy, { on: false });
    await expectRefused(heavy, /^Query cost limit of 500 exceeded, found 10303\.$/, { on: true });
  });

  it('weighs a backward page by `last` and a `nodes` look-up by its ids, as execution reads them', async () => {
    await expectRefused(
      '{ users(last: 100) { edges { node { orders(limit: 100) { id } } } } }',
      /^Query cost limit of 500 exceeded, found 10301\.$/,
    );
    const ids = Array.from({ length: 50 }, () => `"${USER}"`).join(', ');
    await expectRefused(
      `{ nodes(ids: [${ids}]) { ... on User { orders(limit: 10) { id } } } }`,
      /^Query cost limit of 500 exceeded, found 551\.$/,
    );
    await expectAccepted(`{ nodes(ids: ["${USER}", "${USER}"]) { ... on User { orders(limit: 10) { id } } } }`);
  });

  it('prices the example in the documentation as documented', () => {
    const document = parse('{ users(first: 100) { edges { node { orders(limit: 100) { id } } } } }');
    const operation = document.definitions[0] as OperationDefinitionNode;
    expect(queryCost(schema, schema.getQueryType()!, operation.selectionSet, new Map(), {})).toBe(10_301);
    const unpaged = parse('{ orders(userId: "x") { id user { orders { id } } } }').definitions[0] as OperationDefinitionNode;
    // orders(userId) returns up to 100; User.orders without a limit returns 20.
    expect(queryCost(schema, schema.getQueryType()!, unpaged.selectionSet, new Map(), {})).toBe(1 + 100 * (1 + 1 + 1 * (1 + 20 * 1)));
  });
});

describe('cost sees what execution sees', () => {
  const cost = (query: string, variables?: Record<string, unknown>) => operationCost(schema, parse(query), undefined, variables);
  // One user, 100 orders each with its user and orders(limit: 5): 1 + (1 + 100 × (1 + 1 + (1 + 5 × 1))).
  const nested = (limit: string) => `user(id: "${USER}") { orders(limit: ${limit}) { id user { orders(limit: 5) { id } } } }`;
  const NESTED_AT_100 = 1 + (1 + 100 * (1 + 1 + (1 + 5 * 1)));

  it('reads page sizes from literals, variables and variable defaults alike', () => {
    expect(cost(`{ ${nested('100')} }`)).toBe(NESTED_AT_100);
    expect(cost(`query ($m: Int) { ${nested('$m')} }`, { m: 100 })).toBe(NESTED_AT_100);
    expect(cost(`query ($m: Int = 100) { ${nested('$m')} }`)).toBe(NESTED_AT_100);
    expect(cost(`query ($m: Int = 100) { ${nested('$m')} }`, {})).toBe(NESTED_AT_100);
    // A value sent wins over the default; an explicit null means the field's own default (20).
    expect(cost(`query ($m: Int = 100) { ${nested('$m')} }`, { m: 2 })).toBe(1 + (1 + 2 * 8));
    expect(cost(`query ($m: Int = 100) { ${nested('$m')} }`, { m: null })).toBe(1 + (1 + 20 * 8));
    // Variables that do not coerce are refused before execution; there is nothing to weigh.
    expect(cost(`query ($m: Int!) { ${nested('$m')} }`, {})).toBeUndefined();
  });

  it('counts fields behind fragments and every alias', () => {
    const viaFragments = `query ($m: Int = 100) { ...Root }
      fragment Root on Query { user(id: "${USER}") { ... on User { orders(limit: $m) { ...Deep } } } }
      fragment Deep on Order { id user { orders(limit: 5) { id } } }`;
    expect(cost(viaFragments)).toBe(NESTED_AT_100);
    expect(cost(`query ($m: Int = 100) { a: ${nested('$m')} b: ${nested('$m')} }`)).toBe(2 * NESTED_AT_100);
  });

  /** `head` (which spreads F1), each fragment spreading the next `times` times, `depth` fragments deep, the last selecting `leaf`. */
  const fannedOut = (head: string, type: string, depth: number, times: number, leaf: string) =>
    [
      head,
      ...Array.from({ length: depth - 1 }, (_, level) => `fragment F${level + 1} on ${type} { ${`...F${level + 2} `.repeat(times)}}`),
      `fragment F${depth} on ${type} ${leaf}`,
    ].join('\n');

  it('weighs a fragment spread many times in one selection once, as execution runs it once', () => {
    const page = '{ users(first: 100) { edges { node { id orders(limit: 5) { id } } } } }';
    expect(cost(fannedOut('{ ...F1 }', 'Query', 4, 40, page))).toBe(cost(page));
    // Spread under two fields, it runs under each.
    expect(
      cost(`{ a: user(id: "${USER}") { ...U } b: user(id: "${USER}") { ...U ...U } } fragment U on User { orders(limit: 5) { id } }`),
    ).toBe(2 * (1 + (1 + 5)));
  });

  it('answers a small document that spreads its fragments many times as it runs, each root field billed once', async () => {
    const defaults = await startTestServer();
    try {
      // 40 × 40 × 40 spreads: walked once per spread, as before, this small document took seconds of
      // the process's only thread to weigh, for every request sending it.
      const read = await defaults.gql(fannedOut('{ ...F1 }', 'Query', 4, 40, '{ rateLimit { cost } }'));
      expect(read.status, JSON.stringify(read.body).slice(0, 500)).toBe(200);
      expect(read.body).toEqual({ data: { rateLimit: { cost: 1 } } });
      const user = await defaults.gql('mutation { createUser(input: { name: "Fan", email: "fan-out@example.com" }) { id } }');
      const id = (user.body.data as { createUser: { id: string } }).createUser.id;
      const write = await defaults.gql(
        fannedOut(`mutation { createOrder(input: { userId: "${id}", total: 100 }) { ...F1 } }`, 'Order', 4, 40, '{ total }'),
      );
      expect(write.body).toEqual({ data: { createOrder: { total: 100 } } });
    } finally {
      await defaults.close();
    }
  });

  it('refuses the nested default-variable query that used to be weighed at the default page size', async () => {
    const defaults = await startTestServer();
    try {
      const query = `query ($m: Int = 100) { user(id: "${USER}") { orders(limit: $m) { user { orders(limit: $m) { user { orders(limit: $m) { id } } } } } } }`;
      defaults.statements.length = 0;
      const response = await defaults.gql(query);
      expect(response.status).toBe(400);
      expect(response.body.errors![0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
      expect(response.body.errors![0]!.message).toBe('Query cost limit of 10000 exceeded, found 1020202.');
      expect(defaults.statements.filter((sql) => !sql.includes('api_keys'))).toEqual([]);
    } finally {
      await defaults.close();
    }
  });
});

describe('defaults', () => {
  it('let tools introspect the whole schema', async () => {
    const defaults = await startTestServer();
    try {
      const response = await defaults.gql(getIntrospectionQuery());
      expect(response.status).toBe(200);
      expect(response.body.errors).toBeUndefined();
    } finally {
      await defaults.close();
    }
  });

  it('hide field suggestions in production', async () => {
    const production = await startTestServer({ production: true, queryLimits: loadConfig({}).queryLimits });
    try {
      // Sent twice: the second answer comes from the validation cache, and must say the same.
      const hidden = [];
      const shown = [];
      for (let i = 0; i < 2; i++) {
        hidden.push((await production.gql('{ usr(id: "x") { id } }')).body.errors![0]!.message);
        shown.push((await server.gql('{ usr(id: "x") { id } }')).body.errors![0]!.message);
      }
      expect(hidden[0]).toBe('Cannot query field "usr" on type "Query". [Suggestion hidden]');
      expect(hidden[1]).toBe(hidden[0]);
      expect(shown[0]).toContain('Did you mean');
      expect(shown[1]).toBe(shown[0]);
      // Nor names of input fields or enum values, written in the document or sent as variables.
      const misspelt: [string, Record<string, unknown>?][] = [
        ['{ events(type: ORDER_CREATE) { edges { cursor } } }'],
        ['query ($t: EventType) { events(type: $t) { edges { cursor } } }', { t: 'ORDER_CREATE' }],
        ['mutation ($i: CreateUserInput!) { createUser(input: $i) { id } }', { i: { nam: 'x', email: 'a@example.com' } }],
        ['mutation { createUser(input: { nam: "x", email: "a@example.com" }) { id } }'],
      ];
      for (const [query, variables] of misspelt) {
        const answer = JSON.stringify((await production.gql(query, variables)).body);
        expect(answer, query).not.toMatch(/Did you mean|ORDER_CREATED/);
        expect(answer, query).toContain('[Suggestion hidden]');
        expect(JSON.stringify((await server.gql(query, variables)).body), query).toContain('Did you mean');
      }
    } finally {
      await production.close();
    }
  });
});
