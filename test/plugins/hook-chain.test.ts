// The plugins' HTTP hooks run as one chain: in order, each seeing what the ones before it changed,
// stopping at the first answer, and turning an exception into a 500 without internals.
import { createGraphQLError } from '@graphql-tools/utils';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { chainHooks } from '../../src/plugins/hook-chain.ts';
import type { ServerPlugin } from '../../src/plugins/server-context.ts';
import { captureLogs } from '../support/captured-logs.ts';

const schema = createSchema({ typeDefs: 'type Query { hello: String! }', resolvers: { Query: { hello: () => 'world' } } });

function serve(plugins: ServerPlugin[]) {
  const { logger, logs: lines } = captureLogs('debug');
  const yoga = createYoga({ schema, logging: false, plugins: chainHooks(plugins, { logger }) });
  return { yoga, lines };
}

const query = (yoga: ReturnType<typeof serve>['yoga'], path = '/graphql') =>
  yoga.fetch(`http://localhost${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query: '{ hello }' }),
  });

describe('the chain of hooks', () => {
  it('runs every hook in order, synchronous and asynchronous, each seeing the request the one before set', async () => {
    const seen: string[] = [];
    const { yoga } = serve([
      {
        onRequest({ request, setRequest }) {
          seen.push('first');
          const headers = new Headers(request.headers);
          headers.set('x-marked', 'yes');
          setRequest(new Request(request.url, { method: request.method, headers, body: request.body, duplex: 'half' } as RequestInit));
        },
      },
      {
        async onRequest({ request }) {
          await Promise.resolve();
          seen.push(`second saw ${request.headers.get('x-marked')}`);
        },
      },
      {
        onRequest() {
          seen.push('third');
        },
        onResponse({ response }) {
          response.headers.set('x-answered', 'by the chain');
        },
      },
    ]);
    const response = await query(yoga);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { hello: 'world' } });
    expect(response.headers.get('x-answered')).toBe('by the chain');
    expect(seen).toEqual(['first', 'second saw yes', 'third']);
  });

  it('stops at the first hook that answers', async () => {
    const seen: string[] = [];
    const { yoga } = serve([
      {
        async onRequest({ endResponse }) {
          await Promise.resolve();
          seen.push('answered');
          endResponse(new Response('teapot', { status: 418 }));
        },
      },
      {
        onRequest() {
          seen.push('never');
        },
      },
    ]);
    const response = await query(yoga);
    expect(response.status).toBe(418);
    expect(await response.text()).toBe('teapot');
    expect(seen).toEqual(['answered']);
  });

  it('answers a hook that throws with a 500 in the face’s format, logs the cause, and shows no internals', async () => {
    const { yoga, lines } = serve([
      {
        onRequest({ url }) {
          if (url.pathname === '/users') throw new Error('secret internal detail');
        },
        async onResponse({ request }) {
          await Promise.resolve();
          if (new URL(request.url).pathname === '/graphql') throw new Error('another secret detail');
        },
      },
    ]);
    const rest = await query(yoga, '/users');
    expect(rest.status).toBe(500);
    expect(rest.headers.get('content-type')).toBe('application/problem+json');
    const problem = await rest.text();
    expect(JSON.parse(problem)).toMatchObject({ status: 500, type: 'https://portico.dev/problems/internal' });
    expect(problem).not.toContain('secret');

    const graphql = await query(yoga);
    expect(graphql.status).toBe(500);
    const body = await graphql.text();
    expect(JSON.parse(body)).toMatchObject({ errors: [{ extensions: { code: 'INTERNAL' } }] });
    expect(body).not.toContain('secret');

    const logged = lines.filter((line) => line.msg === 'unexpected error while handling a request');
    expect(logged.map((line) => line.hook)).toEqual(['onRequest', 'onResponse']);
  });

  it('lets a request-parse hook refuse with its own GraphQL error, and later parse hooks see the parser it set', async () => {
    const seen: string[] = [];
    const { yoga } = serve([
      {
        onRequestParse({ requestParser, setRequestParser }) {
          if (requestParser)
            setRequestParser(async (request) => ({ ...(await requestParser(request)), query: '{ hello hello2: hello }' }) as never);
        },
      },
      {
        onRequestParse({ request, requestParser }) {
          seen.push(requestParser ? 'parser set' : 'no parser');
          if (request.headers.get('x-refuse'))
            throw createGraphQLError('Refused by a parse hook.', { extensions: { http: { status: 403 } } });
        },
      },
    ]);
    const response = await query(yoga);
    expect(await response.json()).toEqual({ data: { hello: 'world', hello2: 'world' } });
    expect(seen).toEqual(['parser set']);

    const refused = await yoga.fetch('http://localhost/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-refuse': 'yes' },
      body: JSON.stringify({ query: '{ hello }' }),
    });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ errors: [{ message: 'Refused by a parse hook.' }] });
  });

  it('runs execution hooks in order: a stop skips the later ones, and every done hook sees the result the one before set', async () => {
    const seen: string[] = [];
    const { yoga } = serve([
      {
        onExecute: () => ({
          onExecuteDone: ({ result, setResult }) => {
            if ('data' in result) setResult({ ...result, data: { hello: `${String(result.data?.hello)}!` } });
          },
        }),
      },
      {
        async onExecute({ args, setResultAndStopExecution }) {
          await Promise.resolve();
          seen.push('second');
          if (args.operationName === 'Stop') setResultAndStopExecution({ data: { hello: 'stopped' } });
          return {
            onExecuteDone: ({ result }) => {
              seen.push(`second done saw ${JSON.stringify(result)}`);
            },
          };
        },
      },
      {
        onExecute() {
          seen.push('third');
        },
      },
    ]);
    const run = (operationName: string) =>
      yoga.fetch('http://localhost/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query: `query ${operationName} { hello }`, operationName }),
      });
    expect(await (await run('Go')).json()).toEqual({ data: { hello: 'world!' } });
    expect(seen).toEqual(['second', 'third', 'second done saw {"data":{"hello":"world!"}}']);
    seen.length = 0;
    expect(await (await run('Stop')).json()).toEqual({ data: { hello: 'stopped!' } });
    expect(seen).toEqual(['second', 'second done saw {"data":{"hello":"stopped!"}}']);
  });
});
