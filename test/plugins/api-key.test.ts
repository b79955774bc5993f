import { expect, it } from 'vitest';
import { scrubbedUrl } from '../../src/plugins/api-key.ts';
it('masks api_key values in logged URLs, even malformed ones', () => {
  const key = 'pk_test_0AzhYa1QQEDMboaSZ0ZE72DydT4yYbVrF';
  expect(scrubbedUrl(`/users?limit=1&api_key=${key}&x=1`)).toBe(
    `/users?limit=1&api_key=${encodeURIComponent('pk_test_0AzhYa1Q…bVrF')}&x=1`,
  );
  expect(scrubbedUrl('/users?api_key=%E0%A4%A')).toBe(`/users?api_key=${encodeURIComponent('[not a key]')}`);
  expect(scrubbedUrl('/users?limit=1')).toBe('/users?limit=1');
  // However the name is escaped, as URLSearchParams decodes it to find the key.
  for (const name of ['api%5Fkey', '%61pi_key', 'api%5fkey'])
    expect(scrubbedUrl(`/users?${name}=${key}#top`)).toBe(`/users?${name}=${encodeURIComponent('pk_test_0AzhYa1Q…bVrF')}#top`);
});

it('masks a key sent where no key belongs: in the path, or in another parameter', () => {
  const key = 'pk_live_0AzhYa1QQEDMboaSZ0ZE72DydT4yYbVrF';
  const masked = encodeURIComponent('pk_live_0AzhYa1Q…bVrF');
  expect(scrubbedUrl(`/users/${key}`)).toBe(`/users/${masked}`);
  expect(scrubbedUrl(`/users?limit=${key}&cursor=x`)).toBe(`/users?limit=${masked}&cursor=x`);
  expect(scrubbedUrl(`/users/${key}/orders?api_key=${key}`)).toBe(`/users/${masked}/orders?api_key=${masked}`);
  // Written with escapes, as a client's URL encoder may write it.
  expect(scrubbedUrl(`/users?foo=${key.replaceAll('_', '%5F')}&limit=1`)).toBe(`/users?foo=${masked}&limit=1`);
  expect(scrubbedUrl(`/users/${encodeURIComponent(key).replace('A', '%41')}`)).toBe(`/users/${masked}`);
  expect(scrubbedUrl('/users?q=%E2%82%AC&limit=1')).toBe('/users?q=%E2%82%AC&limit=1');
});

it('masks other credentials a client put in the URL: bearer tokens, secrets, passwords, by name or by shape', () => {
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c3JfMDEifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';
  const secret = 'whsec_c2VjcmV0LW9mLXRoZS1lbmRwb2ludC0wMTIzNDU2Nzg5';
  expect(scrubbedUrl(`/graphql?query=x&access_token=${jwt}`)).toBe('/graphql?query=%5Bredacted%5D&access_token=%5Bredacted%5D');
  for (const name of [
    'token',
    'id_token',
    'refresh_token',
    'client_secret',
    'password',
    'secret',
    'access%5Ftoken',
    'Password',
    'ACCESS_TOKEN',
  ])
    expect(scrubbedUrl(`/users?${name}=hunter2&limit=1`)).toBe(`/users?${name}=%5Bredacted%5D&limit=1`);
  // Shaped like a token or a signing secret, wherever it stands.
  expect(scrubbedUrl(`/users/${jwt}?cursor=${secret}`)).toBe('/users/%5Bredacted%5D?cursor=%5Bredacted%5D');
  expect(scrubbedUrl(`/users?x=${jwt.replaceAll('.', '%2E')}`)).toBe('/users?x=%5Bredacted%5D');
  expect(scrubbedUrl('/users?limit=1&sort=name')).toBe('/users?limit=1&sort=name');
});

it("leaves a GraphQL GET's document, variables and extensions out of the log, and keeps its operation name", () => {
  const query = encodeURIComponent('query Q($id: ID!) { user(id: $id) { email } }');
  const variables = encodeURIComponent('{"id":"usr_01","note":"jane.doe@example.com"}');
  expect(scrubbedUrl(`/graphql?query=${query}&variables=${variables}&operationName=Q&extensions=%7B%7D`)).toBe(
    '/graphql?query=%5Bredacted%5D&variables=%5Bredacted%5D&operationName=Q&extensions=%5Bredacted%5D',
  );
  // Elsewhere, parameters of those names are the route's own.
  expect(scrubbedUrl('/users?query=x')).toBe('/users?query=x');
});
