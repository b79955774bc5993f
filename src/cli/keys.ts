// `npm run keys -- <command>`: API keys from the command line. A new key's secret is printed once.
//   create --name NAME --scopes a,b [--allow-ip CIDR]... [--expires 30d] [--rate-limit N] [--json]
//   list [--json]            rotate ID [--grace 24h] [--expires 30d] [--json]            revoke ID [--json]
//   usage ID [--days 30] [--json]
import { commandLine, refuseFlagsNotTaken, usageError, withDatabase } from './command-line.ts';
import { ApiKey } from '../db/entities/index.ts';
import { NotFoundError } from '../errors.ts';
import { requireId } from '../services/validation.ts';
import { resolveSecret } from '../secrets.ts';
import { usageOfApiKey } from '../services/api-key-usage.ts';
import { SCOPES, createApiKey, listApiKeys, revokeApiKey, rotateApiKey } from '../services/api-keys.ts';
import { parseDuration } from '../duration.ts';

const USAGE = `usage: npm run keys -- create --name NAME --scopes ${SCOPES.join(',')} [--allow-ip CIDR]... [--expires 30d] [--rate-limit N] [--json]
       npm run keys -- list [--json]
       npm run keys -- rotate KEY_ID [--grace 24h] [--expires 30d] [--json]
       npm run keys -- revoke KEY_ID [--json]
       npm run keys -- usage KEY_ID [--days 30] [--json]`;

/** A key as listed: never its secret, only the public prefix. */
function describe(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    key: `${key.prefix}…`,
    scopes: key.scopes,
    allowedCidrs: key.allowedCidrs,
    // Operations per rate limit window (RATE_LIMIT_WINDOW_MS, a minute unless set); null: RATE_LIMIT.
    rateLimit: key.rateLimitPerMinute ?? null,
    createdAt: key.createdAt.toISOString(),
    expiresAt: key.expiresAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    rotatedFromId: key.rotatedFromId ?? null,
  };
}

/** The flag each setting of a new key comes from, for errors. */
const FLAG_OF: Record<string, string> = {
  name: '--name',
  scopes: '--scopes',
  allowedCidrs: '--allow-ip',
  expiresAt: '--expires',
  rateLimitPerMinute: '--rate-limit',
  graceMs: '--grace',
};

/** Rows under a header, each column as wide as its widest cell. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function fail(message: string): never {
  return usageError(USAGE, message);
}

const EXPIRES_MIN_MS = 60_000;
const EXPIRES_MAX_MS = 3650 * 86_400_000;

const { values, positionals } = commandLine(USAGE, {
  name: { type: 'string' },
  scopes: { type: 'string' },
  'allow-ip': { type: 'string', multiple: true },
  expires: { type: 'string' },
  'rate-limit': { type: 'string' },
  grace: { type: 'string' },
  days: { type: 'string' },
  json: { type: 'boolean' },
});

/** The flags each command takes. */
const TAKES: Record<string, readonly string[]> = {
  create: ['name', 'scopes', 'allow-ip', 'expires', 'rate-limit', 'json'],
  list: ['json'],
  rotate: ['grace', 'expires', 'json'],
  revoke: ['json'],
  usage: ['days', 'json'],
};
const [command, id] = positionals;
if (!command || !Object.hasOwn(TAKES, command)) fail(command ? `unknown command "${command}"` : 'a command is required');
refuseFlagsNotTaken(USAGE, command, values, TAKES[command]!);
if (['rotate', 'revoke', 'usage'].includes(command) && !id) fail(`${command} needs the id of a key (see \`keys list\`)`);
const extra = positionals[['rotate', 'revoke', 'usage'].includes(command) ? 2 : 1];
if (extra !== undefined) fail(`unexpected argument "${extra}"`);
const days = Number(values.days ?? '30');
if (!Number.isInteger(days) || days < 1 || days > 366) fail('--days takes a whole number from 1 to 366');
const expiresIn = values.expires === undefined ? undefined : parseDuration(values.expires);
if (values.expires !== undefined && expiresIn === undefined) fail('--expires takes a duration like 90s, 15m, 24h or 30d');
// A key that expires before anyone can use it, or outlives every plan to rotate it, is a mistake.
if (expiresIn !== undefined && (expiresIn < EXPIRES_MIN_MS || expiresIn > EXPIRES_MAX_MS)) {
  fail(`--expires must be from 1m to ${EXPIRES_MAX_MS / 86_400_000}d (got ${values.expires})`);
}
const graceMs = parseDuration(values.grace ?? '24h');
if (graceMs === undefined) fail('--grace takes a duration like 0s, 15m, 24h or 7d');
if (command === 'create' && (!values.name || !values.scopes)) fail('create needs --name and --scopes');
// Number() would read 0x10, 1e3 or 0b11 as numbers nobody meant to type.
if (values['rate-limit'] !== undefined && !/^-?\d+$/.test(values['rate-limit'])) fail('--rate-limit takes a whole number, like 600');

const print = (json: unknown, text: string) =>
  process.stdout.write(values.json === true ? `${JSON.stringify(json, null, 2)}\n` : `${text}\n`);

await withDatabase({ usage: USAGE, flags: FLAG_OF }, async ({ config, db }) => {
  const pepper = await resolveSecret(config.apiKeyPepper, config.dataDir, 'api-key-pepper');
  const em = db.orm.em.fork();
  if (command === 'create') {
    const rateLimit = values['rate-limit'] === undefined ? null : Number(values['rate-limit']);
    const { key, secret } = await createApiKey(em, pepper, config.production ? 'live' : 'test', {
      name: values.name!,
      scopes: values.scopes!.split(','),
      allowedCidrs: values['allow-ip'] ?? [],
      expiresAt: expiresIn === undefined ? null : new Date(Date.now() + expiresIn),
      rateLimitPerMinute: rateLimit,
    });
    print(
      { ...describe(key), secret },
      `created ${key.id} (${key.name})\n\n  ${secret}\n\nThis is the only time the key is shown; store it now.`,
    );
  } else if (command === 'list') {
    const keys = (await listApiKeys(em)).map(describe);
    const replaced = new Set(keys.map((k) => k.rotatedFromId));
    const state = (k: ReturnType<typeof describe>) => {
      if (k.revokedAt) return 'revoked';
      if (k.expiresAt && Date.parse(k.expiresAt) <= Date.now()) return 'expired';
      return replaced.has(k.id) && k.expiresAt ? `rotating until ${k.expiresAt}` : 'active';
    };
    const rows = keys.map((k) => [
      k.name,
      k.id,
      k.key,
      k.scopes.join(','),
      k.rateLimit === null ? 'default' : String(k.rateLimit),
      state(k),
      k.expiresAt ?? 'never',
      k.lastUsedAt ?? 'never',
    ]);
    print(
      keys,
      keys.length === 0 ? 'no keys' : table(['NAME', 'ID', 'PREFIX', 'SCOPES', 'RATE LIMIT', 'STATE', 'EXPIRES', 'LAST USED'], rows),
    );
  } else if (command === 'rotate') {
    const { key, secret, previous } = await rotateApiKey(em, pepper, id!, graceMs, expiresIn);
    print(
      { ...describe(key), secret, previous: describe(previous) },
      `rotated ${previous.id} to ${key.id}; the old key works until ${previous.expiresAt?.toISOString()}\n\n  ${secret}\n\nThis is the only time the key is shown; store it now.`,
    );
  } else if (command === 'usage') {
    if (!(await em.findOne(ApiKey, { id: requireId('apiKey', 'id', id!) }))) throw new NotFoundError(`No API key has the id ${id}.`);
    const rows = await usageOfApiKey(em, id!, days);
    const total = rows.reduce((sum, row) => sum + row.requests, 0);
    const text = rows.map((row) => `${row.day}  ${String(row.requests).padStart(9)}  ${row.operation}`).join('\n');
    print(
      { id, days, total, rows },
      `${text || 'no requests'}\n\n${total} requests in the last ${days} days (counts are written every few seconds)`,
    );
  } else {
    const key = await revokeApiKey(em, id!);
    print(describe(key), `revoked ${key.id} (${key.name}) at ${key.revokedAt?.toISOString()}`);
  }
});
