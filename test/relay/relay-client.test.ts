// A real Relay client against the schema and a live server. The Relay compiler validates fragments
// that need what Relay expects of a server (the Node interface, `node(id:)` for @refetchable on a
// type, connections with PageInfo for @connection, forwards and backwards) against the checked-in
// `schema/schema.graphql`; then relay-runtime runs the compiled queries over HTTP, paginates
// both ways with its connection handler merging the pages, and refetches a user through `node`.
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile, copyFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  Environment,
  Network,
  RecordSource,
  Store,
  createOperationDescriptor,
  fetchQuery,
  getRequest,
  getSelector,
  type ConcreteRequest,
  type GraphQLResponse,
  type ReaderFragment,
} from 'relay-runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_FILE } from '../../src/graphql/print.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const require = createRequire(import.meta.url);
/** The compiler's native binary for this platform, as its own `cli.js` finds it. */
const RELAY_COMPILER = require('relay-compiler') as string | null;

// What a Relay app would write: a list paged forwards, one paged backwards, and a refetchable user.
const DOCUMENTS = `
graphql\`
  fragment UserCard on User @refetchable(queryName: "UserCardRefetchQuery") {
    id
    name
    email
  }
\`;
graphql\`
  fragment UsersForward on Query
  @refetchable(queryName: "UsersForwardPaginationQuery")
  @argumentDefinitions(count: { type: "Int", defaultValue: 3 }, cursor: { type: "String" }) {
    users(first: $count, after: $cursor) @connection(key: "UsersForward_users") {
      edges { node { id ...UserCard } }
    }
  }
\`;
graphql\`
  fragment UsersBackward on Query
  @refetchable(queryName: "UsersBackwardPaginationQuery")
  @argumentDefinitions(count: { type: "Int", defaultValue: 3 }, cursor: { type: "String" }) {
    users(last: $count, before: $cursor) @connection(key: "UsersBackward_users") {
      edges { node { id } }
    }
  }
\`;
graphql\`
  query UsersFirstPageQuery {
    ...UsersForward
  }
\`;
graphql\`
  query UsersLastPageQuery {
    ...UsersBackward
  }
\`;
`;

let server: TestServer;
let workDir: string;
const userIds: string[] = [];

interface Compiled {
  ok: boolean;
  /** What the compiler printed: its errors name what did not fit. */
  output: string;
  /** Where the compiled artifacts are, one CommonJS module per document. */
  artifacts: string;
}

/** Compiles `documents` against the checked-in schema, as a Relay app's build would. */
async function compile(documents: string): Promise<Compiled> {
  const project = await mkdtemp(path.join(workDir, 'project-'));
  await mkdir(path.join(project, 'src'));
  await copyFile(SCHEMA_FILE, path.join(project, 'schema.graphql'));
  await writeFile(path.join(project, 'src', 'Users.js'), documents);
  await writeFile(
    path.join(project, 'relay.config.json'),
    JSON.stringify({
      src: './src',
      schema: './schema.graphql',
      language: 'javascript',
      artifactDirectory: './__generated__',
      eagerEsModules: false,
    }),
  );
  const artifacts = path.join(project, '__generated__');
  await mkdir(artifacts);
  try {
    const { stdout, stderr } = await promisify(execFile)(RELAY_COMPILER!, [], { cwd: project, env: { ...process.env, NO_COLOR: '1' } });
    return { ok: true, output: `${stdout}${stderr}`, artifacts };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}`, artifacts };
  }
}

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'portico-relay-'));
  server = await startTestServer();
  for (let i = 0; i < 8; i++) {
    const response = await server.gql<{ createUser: { id: string } }>(
      'mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }',
      { input: { name: `Relay ${i}`, email: `relay-${i}@example.com` } },
    );
    userIds.push(response.body.data!.createUser.id);
  }
});
afterAll(async () => {
  await server.close();
  await rm(workDir, { recursive: true, force: true });
});

describe('the Relay compiler', () => {
  it('has a binary for this platform', () => {
    expect(RELAY_COMPILER).toEqual(expect.any(String));
  });

  it('refuses documents that do not fit the schema (so its approval below means something)', async () => {
    const result = await compile('graphql`fragment Broken on User { id nickname }`;');
    expect(result.ok).toBe(false);
    expect(result.output).toContain('nickname');
  });
});

describe('relay-runtime against a live server', () => {
  let compiled: Compiled;
  let environment: Environment;
  const artifact = <T>(name: string) => require(path.join(compiled.artifacts, `${name}.graphql.js`)) as T;

  beforeAll(async () => {
    compiled = await compile(DOCUMENTS);
    const network = Network.create(async (params, variables) => {
      const response = await server.fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify({ query: params.text, variables }),
      });
      return (await response.json()) as GraphQLResponse;
    });
    environment = new Environment({ network, store: new Store(new RecordSource()) });
  });

  /** Fetches a compiled query into the store and keeps it there, as a mounted component would. */
  async function load(query: ConcreteRequest, variables: Record<string, unknown>) {
    const operation = createOperationDescriptor(getRequest(query), variables);
    environment.retain(operation);
    await fetchQuery(environment, query, variables).toPromise();
    return environment.lookup(operation.fragment).data as Record<string, unknown>;
  }

  /** The users a fragment's connection holds now, as a component reading it would see them. */
  function usersIn(fragment: string, queryData: Record<string, unknown>) {
    const selector = getSelector(artifact<ReaderFragment>(fragment), queryData);
    const data = environment.lookup(selector as Parameters<Environment['lookup']>[0]).data as {
      users: {
        edges: { node: { id: string } }[];
        pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
      };
    };
    return data.users;
  }

  it('compiles fragments that need Node, node(id:) and connections both ways', () => {
    expect(compiled.output).not.toMatch(/error/i);
    expect(compiled.ok, compiled.output).toBe(true);
  });

  it('pages forwards with @connection: the handler appends each page after the last', async () => {
    const root = await load(artifact('UsersFirstPageQuery'), {});
    const firstPage = usersIn('UsersForward', root);
    expect(firstPage.edges.map((edge) => edge.node.id)).toEqual(userIds.slice(0, 3));
    expect(firstPage.pageInfo.hasNextPage).toBe(true);

    await load(artifact('UsersForwardPaginationQuery'), { count: 3, cursor: firstPage.pageInfo.endCursor });
    const merged = usersIn('UsersForward', root);
    expect(merged.edges.map((edge) => edge.node.id)).toEqual(userIds.slice(0, 6));

    await load(artifact('UsersForwardPaginationQuery'), { count: 3, cursor: merged.pageInfo.endCursor });
    const all = usersIn('UsersForward', root);
    expect(all.edges.map((edge) => edge.node.id)).toEqual(userIds);
    expect(all.pageInfo.hasNextPage).toBe(false);
  });

  it('pages backwards with @connection: the handler prepends each page before the first', async () => {
    const root = await load(artifact('UsersLastPageQuery'), {});
    const lastPage = usersIn('UsersBackward', root);
    expect(lastPage.edges.map((edge) => edge.node.id)).toEqual(userIds.slice(-3));
    expect(lastPage.pageInfo.hasPreviousPage).toBe(true);

    await load(artifact('UsersBackwardPaginationQuery'), { count: 3, cursor: lastPage.pageInfo.startCursor });
    const merged = usersIn('UsersBackward', root);
    expect(merged.edges.map((edge) => edge.node.id)).toEqual(userIds.slice(-6));

    await load(artifact('UsersBackwardPaginationQuery'), { count: 3, cursor: merged.pageInfo.startCursor });
    const all = usersIn('UsersBackward', root);
    expect(all.edges.map((edge) => edge.node.id)).toEqual(userIds);
    expect(all.pageInfo.hasPreviousPage).toBe(false);
  });

  it('refetches one user through node(id:), by the id it already has', async () => {
    await server.gql('mutation ($id: ID!) { updateUser(id: $id, input: { name: "Renamed" }) { id } }', { id: userIds[1] });
    const refetch = artifact<ConcreteRequest>('UserCardRefetchQuery');
    expect(refetch.params.text).toContain('node(id: $id)');
    const data = await load(refetch, { id: userIds[1] });
    const card = environment.lookup(
      getSelector(artifact<ReaderFragment>('UserCard'), data.node) as Parameters<Environment['lookup']>[0],
    ).data;
    expect(card).toEqual({ id: userIds[1], name: 'Renamed', email: 'relay-1@example.com' });
  });
});
