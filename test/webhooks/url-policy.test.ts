// The SSRF guard's name resolution: a host name is checked by every address it resolves to (the
// address spellings themselves are covered end to end in test/e2e/webhook-endpoints.test.ts).
import { describe, expect, it } from 'vitest';
import { checkUrlForm, urlRefusal, type Resolve } from '../../src/webhooks/url-policy.ts';

const policy = { allowHttp: false, allowedHosts: ['hooks.internal.test'] };

/** A resolver answering from a fixed table, as a DNS server would. */
const table =
  (entries: Record<string, string[] | Error>): Resolve =>
  (host) => {
    const found = entries[host];
    return found instanceof Error ? Promise.reject(found) : Promise.resolve(found ?? []);
  };

describe('urlRefusal', () => {
  const resolve = table({
    'public.example': ['93.184.216.34', '2606:2800:220:1::1'],
    'rebinding.example': ['93.184.216.34', '10.0.0.7'],
    'aws.example': ['fd00:ec2::254'],
    'mapped.example': ['::ffff:169.254.169.254'],
    'gone.example': Object.assign(new Error('getaddrinfo ENOTFOUND gone.example'), { code: 'ENOTFOUND' }),
    'slow.example': new Error('timeout'),
  });

  it('refuses dot segments when a URL is set, and still sends to an endpoint stored with them before', async () => {
    expect(await urlRefusal('https://public.example/hooks/../x', policy, resolve)).toBe(
      'must not contain . or .. path segments: write the path they lead to',
    );
    // What the sender checks before each attempt: where it may go, not how it was written.
    expect(checkUrlForm('https://93.184.216.34/hooks/../x', policy)).toEqual({ url: new URL('https://93.184.216.34/x') });
  });

  it('accepts a name whose every address is public', async () => {
    expect(await urlRefusal('https://public.example/hooks', policy, resolve)).toBeUndefined();
  });

  it('refuses a name with any address that is not public, naming it', async () => {
    expect(await urlRefusal('https://rebinding.example/', policy, resolve)).toBe(
      'must not point at rebinding.example, which resolves to 10.0.0.7, a private address',
    );
    expect(await urlRefusal('https://aws.example/', policy, resolve)).toMatch(/unique-local/);
    expect(await urlRefusal('https://mapped.example/', policy, resolve)).toMatch(/link-local/);
  });

  it('refuses a name that does not resolve, or not in time', async () => {
    expect(await urlRefusal('https://gone.example/', policy, resolve)).toBe('host gone.example does not resolve to an address');
    expect(await urlRefusal('https://nothing.example/', policy, resolve)).toBe('host nothing.example does not resolve to an address');
    expect(await urlRefusal('https://slow.example/', policy, resolve)).toBe('host slow.example could not be resolved in time');
  });

  it('in production, names neither the address a host resolved to nor whether it resolved at all', async () => {
    const production = { ...policy, revealAddresses: false };
    for (const host of ['rebinding.example', 'aws.example', 'gone.example', 'nothing.example']) {
      expect(await urlRefusal(`https://${host}/`, production, resolve), host).toBe(
        `must point at a host that resolves to public addresses only (${host} does not)`,
      );
    }
    expect(await urlRefusal('https://slow.example/', production, resolve)).toBe('host slow.example could not be resolved in time');
    expect(await urlRefusal('https://public.example/hooks', production, resolve)).toBeUndefined();
  });

  it('lets a listed host through without asking the resolver', async () => {
    const refuse: Resolve = () => Promise.reject(new Error('must not be asked'));
    expect(await urlRefusal('https://hooks.internal.test/x', policy, refuse)).toBeUndefined();
    expect(await urlRefusal('https://HOOKS.internal.test/x', policy, refuse)).toBeUndefined();
  });
});
