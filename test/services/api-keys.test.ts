import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openOrm, type MikroORM } from '../../src/db/orm.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../src/errors.ts';
import { createLogger } from '../../src/log.ts';
import { listen } from '../../src/db/notifications.ts';
import { loadConfig } from '../../src/config.ts';
import { databaseBounds } from '../../src/db/database.ts';
import { generateKeySecret, prefixOf } from '../../src/services/api-key-secrets.ts';
import { ApiKeyVerifier } from '../../src/services/api-key-verifier.ts';
import { API_KEYS_CHANNEL, createApiKey, listApiKeys, revokeApiKey, rotateApiKey } from '../../src/services/api-keys.ts';
import { createTestDatabase } from '../support/database.ts';

const PEPPER = 'a-pepper-of-at-least-thirty-two-characters';
let orm: MikroORM;
let drop: () => Promise<void>;
let databaseUrl: string;
/** Every statement the test's ORM ran. */
const statements: string[] = [];

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  databaseUrl = database.url;
  orm = await openOrm(database.url, { poolMax: 2, logger: createLogger('silent'), onQuery: (sql) => statements.push(sql) });
});
afterAll(async () => {
  await orm.close();
  await drop();
});

const em = () => orm.em.fork();
const verifier = (ttlMs = 0) => new ApiKeyVerifier(em, PEPPER, { ttlMs, maxEntries: 100 });
const settings = { name: 'Billing backend', scopes: ['users:read', 'orders:write'] };

describe('issuing keys', () => {
  it('stores the settings and only a hash of the secret', async () => {
    const { key, secret } = await createApiKey(em(), PEPPER, 'test', {
      ...settings,
      allowedCidrs: ['10.1.2.3', '2001:DB8::/32'],
      rateLimitPerMinute: 50,
    });
    expect(key).toMatchObject({
      name: 'Billing backend',
      scopes: ['users:read', 'orders:write'],
      allowedCidrs: ['10.1.2.3/32', '2001:db8::/32'],
      rateLimitPerMinute: 50,
    });
    const rows = await em().execute<Record<string, unknown>[]>('select * from api_keys where id = ?', [key.id]);
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(JSON.stringify(rows)).not.toContain(secret.slice(16));
  });

  it.each([
    [{ name: '' }, 'name'],
    [{ scopes: [] }, 'scopes'],
    [{ scopes: ['users:read', 'root'] }, 'scopes'],
    [{ allowedCidrs: ['10.0.0.0/33'] }, 'allowedCidrs'],
    [{ allowedCidrs: ['not-an-ip'] }, 'allowedCidrs'],
    [{ expiresAt: new Date(Date.now() - 1000) }, 'expiresAt'],
    [{ rateLimitPerMinute: 0 }, 'rateLimitPerMinute'],
  ])('refuses %j', async (change, field) => {
    const error = await createApiKey(em(), PEPPER, 'test', { ...settings, ...change }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).fieldErrors.map((e) => e.field)).toContain(field);
  });
});

describe('verifying keys', () => {
  it('accepts the secret it issued, with its settings, and nothing else', async () => {
    const { key, secret } = await createApiKey(em(), PEPPER, 'test', settings);
    expect(await verifier().verify(secret)).toMatchObject({ id: key.id, scopes: settings.scopes });
    expect(await verifier().verify(`${secret.slice(0, -1)}${secret.endsWith('a') ? 'b' : 'a'}`)).toBeUndefined();
    expect(await verifier().verify('garbage')).toBeUndefined();
    expect(
      await new ApiKeyVerifier(em, 'another-pepper-of-at-least-thirty-two-chars', { ttlMs: 0, maxEntries: 10 }).verify(secret),
    ).toBeUndefined();
  });

  it('refuses a revoked key, at once without a cache and after the cache time with one', async () => {
    const { key, secret } = await createApiKey(em(), PEPPER, 'test', settings);
    const cached = verifier(60_000);
    const now = Date.now();
    expect(await cached.verify(secret, now)).toBeDefined();
    await revokeApiKey(em(), key.id);
    expect(await verifier().verify(secret)).toBeUndefined();
    expect(await cached.verify(secret, now + 1)).toBeDefined();
    expect(await cached.verify(secret, now + 60_001)).toBeUndefined();
    cached.keysChanged(key.id);
    expect(await cached.verify(secret, now + 2)).toBeUndefined();
  });

  it('refuses a revoked key at once on every instance that listens for key changes, despite its cache', async () => {
    const { key, secret } = await createApiKey(em(), PEPPER, 'test', settings);
    const cached = verifier(3_600_000);
    const listener = await listen(databaseUrl, API_KEYS_CHANNEL, (payload) => cached.keysChanged(payload), createLogger('silent'), {
      bounds: databaseBounds(loadConfig({})),
    });
    try {
      expect(await cached.verify(secret)).toBeDefined();
      await revokeApiKey(em(), key.id);
      await expect.poll(() => cached.verify(secret), { timeout: 10_000, interval: 50 }).toBeUndefined();
    } finally {
      await listener.close();
    }
  });

  it('does not cache a key read before its revocation was heard of, while the read was on its way', async () => {
    const { key, secret } = await createApiKey(em(), PEPPER, 'test', settings);
    // The key's row is read (still valid), and its answer arrives only after the revocation's
    // notification: the order in which a slow read and a revocation meet on a busy instance.
    const read = Promise.withResolvers<void>();
    const answered = Promise.withResolvers<void>();
    const slowReads = () => {
      const forked = em();
      const findOne = forked.findOne.bind(forked);
      forked.findOne = (async (...args: Parameters<typeof findOne>) => {
        const row = await findOne(...args);
        read.resolve();
        await answered.promise;
        return row;
      }) as typeof forked.findOne;
      return forked;
    };
    const cached = new ApiKeyVerifier(slowReads, PEPPER, { ttlMs: 3_600_000, maxEntries: 100 });
    const during = cached.verify(secret);
    await read.promise;
    await revokeApiKey(em(), key.id);
    cached.keysChanged(key.id);
    answered.resolve();
    // The request that began before the revocation is answered from what it read…
    expect(await during).toBeDefined();
    // …but what it read is not kept: the next request sees the revocation.
    expect(await cached.verify(secret)).toBeUndefined();
  });

  it('refuses an expired key, even from the cache', async () => {
    const expiresAt = new Date(Date.now() + 60_000);
    const { secret } = await createApiKey(em(), PEPPER, 'test', { ...settings, expiresAt });
    const cached = verifier(3_600_000);
    expect(await cached.verify(secret, Date.now())).toBeDefined();
    expect(await cached.verify(secret, expiresAt.getTime() + 1)).toBeUndefined();
  });
});

describe('rotating and revoking', () => {
  it('issues a successor with the same settings; the old key works until the grace ends', async () => {
    const { key: old, secret: oldSecret } = await createApiKey(em(), PEPPER, 'test', { ...settings, allowedCidrs: ['10.0.0.0/8'] });
    const before = Date.now();
    const { key, secret, previous } = await rotateApiKey(em(), PEPPER, old.id, 3_600_000);
    expect(key).toMatchObject({ name: old.name, scopes: old.scopes, allowedCidrs: ['10.0.0.0/8'], rotatedFromId: old.id });
    expect(secret).not.toBe(oldSecret);
    const graceEnd = previous.expiresAt!.getTime();
    expect(graceEnd).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(await verifier().verify(oldSecret, graceEnd - 1)).toBeDefined();
    expect(await verifier().verify(oldSecret, graceEnd + 1)).toBeUndefined();
    expect(await verifier().verify(secret, graceEnd + 1)).toBeDefined();
  });

  it('never extends an earlier expiry, and refuses to rotate a revoked key', async () => {
    const expiresAt = new Date(Date.now() + 60_000);
    const { key } = await createApiKey(em(), PEPPER, 'test', { ...settings, expiresAt });
    const { previous } = await rotateApiKey(em(), PEPPER, key.id, 86_400_000);
    expect(previous.expiresAt!.getTime()).toBe(expiresAt.getTime());
    const { key: doomed } = await createApiKey(em(), PEPPER, 'test', settings);
    await revokeApiKey(em(), doomed.id);
    await expect(rotateApiKey(em(), PEPPER, doomed.id, 0)).rejects.toBeInstanceOf(ConflictError);
  });

  it('revokes idempotently and reports unknown keys', async () => {
    const { key } = await createApiKey(em(), PEPPER, 'test', settings);
    const first = (await revokeApiKey(em(), key.id)).revokedAt;
    expect((await revokeApiKey(em(), key.id)).revokedAt).toEqual(first);
    await expect(revokeApiKey(em(), 'key_01jd3x3b8vfb9s1p4t4p6q2k7m')).rejects.toBeInstanceOf(NotFoundError);
    await expect(revokeApiKey(em(), 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m')).rejects.toBeInstanceOf(ValidationError);
    expect((await listApiKeys(em())).map((k) => k.id)).toContain(key.id);
  });
});

describe('strangers', () => {
  const randomKey = () => generateKeySecret('test').secret;

  it('are refused from memory: a key whose prefix does not exist costs no database work', async () => {
    await createApiKey(em(), PEPPER, 'test', settings);
    const started = verifier(60_000);
    await started.start();
    try {
      statements.length = 0;
      for (let i = 0; i < 1000; i++) expect(await started.verify(randomKey())).toBeUndefined();
      expect(statements).toEqual([]);
    } finally {
      started.stop();
    }
  });

  it('never evict a valid key from the cache, and a wrong secret for a real prefix is refused from it', async () => {
    const { secret } = await createApiKey(em(), PEPPER, 'test', settings);
    const small = new ApiKeyVerifier(em, PEPPER, { ttlMs: 60_000, maxEntries: 2 });
    await small.start();
    try {
      expect(await small.verify(secret)).toBeDefined();
      statements.length = 0;
      for (let i = 0; i < 1000; i++) expect(await small.verify(randomKey())).toBeUndefined();
      const forged = `${prefixOf(secret)}${randomKey().slice(16)}`;
      for (let i = 0; i < 100; i++) expect(await small.verify(forged)).toBeUndefined();
      expect(await small.verify(secret)).toBeDefined();
      expect(statements).toEqual([]);
    } finally {
      small.stop();
    }
  });

  it('do not hide a new key: it verifies once its notification arrives, or at the next top-up', async () => {
    const started = verifier(60_000);
    await started.start();
    try {
      const notified = await createApiKey(em(), PEPPER, 'test', settings);
      // This instance has not heard of it yet, so it is refused from memory…
      expect(await started.verify(notified.secret)).toBeUndefined();
      started.keysChanged(notified.key.prefix);
      expect(await started.verify(notified.secret)).toBeDefined();

      const quiet = await createApiKey(em(), PEPPER, 'test', settings);
      await started.topUp();
      expect(await started.verify(quiet.secret)).toBeDefined();
    } finally {
      started.stop();
    }
  });

  it('do not hide a key whose notification arrives while the prefixes are being reloaded', async () => {
    // A reload follows every (re)connection of the notification channel, the first one included. A
    // key committed after the reload's read, whose notification arrives before that read returns,
    // is in neither; it must still verify at once, not after the next top-up.
    const started = verifier(3_600_000);
    await started.start();
    try {
      const issued = await em().transactional(async (tx) => {
        const key = await createApiKey(tx, PEPPER, 'test', settings);
        // The key is not committed yet: the reload's read cannot see it.
        const reloading = started.reload();
        started.keysChanged(key.key.prefix);
        await reloading;
        return key;
      });
      expect(await started.verify(issued.secret)).toMatchObject({ id: issued.key.id });
    } finally {
      started.stop();
    }
  });

  it('learn of keys created elsewhere through the notification channel', async () => {
    const started = verifier(3_600_000);
    await started.start();
    const listener = await listen(databaseUrl, API_KEYS_CHANNEL, (payload) => started.keysChanged(payload), createLogger('silent'), {
      bounds: databaseBounds(loadConfig({})),
    });
    try {
      const { secret } = await createApiKey(em(), PEPPER, 'test', settings);
      await expect.poll(() => started.verify(secret), { timeout: 10_000, interval: 20 }).toBeDefined();
    } finally {
      started.stop();
      await listener.close();
    }
  });
});
