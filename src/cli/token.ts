// `npm run token -- USER_ID [--expires 1h]`: a user token for development, signed with the HS256
// secret the service verifies with (JWT_SECRET, or the one generated in the data folder), for a user
// that exists. With an identity provider configured (JWT_JWKS_URL, JWT_PUBLIC_KEY), tokens come from
// that provider instead.
import { SignJWT } from 'jose';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { exitWithStartupFailure } from '../startup.ts';
import { isId } from '../db/ids.ts';
import { NotFoundError } from '../errors.ts';
import { hs256Secret } from '../services/user-tokens.ts';
import { parseDuration } from '../duration.ts';
import { commandLine, usageError, withDatabase } from './command-line.ts';

const USAGE = 'usage: npm run token -- USER_ID [--expires 1h]';

const { values, positionals } = commandLine(USAGE, { expires: { type: 'string', default: '1h' } });
const [userId, ...extra] = positionals;
if (!userId) usageError(USAGE, 'the id of the user the token speaks for is required');
if (extra.length > 0) usageError(USAGE, `unexpected argument ${extra[0]}`);
if (!isId('user', userId)) usageError(USAGE, `${userId} is not a user id (they look like usr_01jd3x3b8vfb9s1p4t4p6q2k7m)`);
const expiresMs = parseDuration(values.expires);
if (expiresMs === undefined || expiresMs === 0)
  usageError(USAGE, `--expires takes a duration like 15m, 1h or 24h (got "${values.expires}")`);

let config: Config;
try {
  config = loadConfig();
  if (config.jwt.jwksUrl || config.jwt.publicKey) {
    throw new ConfigError(
      'user tokens come from the identity provider at JWT_JWKS_URL / JWT_PUBLIC_KEY; this command signs only with an HS256 secret.',
    );
  }
} catch (error) {
  exitWithStartupFailure(error);
}
if (expiresMs / 1000 > config.jwt.maxAgeSec) {
  usageError(
    USAGE,
    `--expires ${values.expires} is longer than JWT_MAX_AGE allows (${config.jwt.maxAgeSec} s); the service would refuse the token`,
  );
}

await withDatabase({ usage: USAGE, flags: {} }, async ({ db }) => {
  const found = await db.orm.em.fork().execute<{ id: string }[]>('select id from users where id = ?', [userId]);
  if (found.length === 0) throw new NotFoundError(`No user has the id ${userId}.`);
  const secret = await hs256Secret(config.jwt, config.dataDir);
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(userId)
    .setIssuer(config.jwt.issuer)
    .setAudience(config.jwt.audience)
    .setIssuedAt()
    .setExpirationTime(Math.floor((Date.now() + expiresMs) / 1000))
    .sign(new TextEncoder().encode(secret));
  process.stdout.write(`${token}\n`);
});
