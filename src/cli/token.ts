// `npm run token -- USER_ID [--expires 1h]`: a user token for development, signed with the HS256
// secret the service verifies with (JWT_SECRET, or the one generated in the data folder). With an
// identity provider configured (JWT_JWKS_URL, JWT_PUBLIC_KEY), tokens come from that provider instead.
import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';
import { ConfigError, loadConfig } from '../config.ts';
import { isId } from '../db/ids.ts';
import { hs256Secret } from '../services/user-tokens.ts';
import { exitWithStartupFailure } from '../startup.ts';
import { parseDuration } from '../duration.ts';

const USAGE = 'usage: npm run token -- USER_ID [--expires 1h]';

try {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { expires: { type: 'string', default: '1h' } } });
  const [userId] = positionals;
  const expiresMs = parseDuration(values.expires);
  if (!userId || !isId('user', userId) || expiresMs === undefined) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const config = loadConfig();
  if (config.jwt.jwksUrl || config.jwt.publicKey) {
    throw new ConfigError(
      'user tokens come from the identity provider at JWT_JWKS_URL / JWT_PUBLIC_KEY; this command signs only with an HS256 secret.',
    );
  }
  if (expiresMs / 1000 > config.jwt.maxAgeSec) {
    process.stderr.write(
      `--expires ${values.expires} is longer than JWT_MAX_AGE allows (${config.jwt.maxAgeSec} s); the service would refuse the token.\n`,
    );
    process.exit(2);
  }
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
} catch (error) {
  if (error instanceof TypeError && 'code' in error) {
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    process.exit(2);
  }
  exitWithStartupFailure(error);
}
