import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

describe('configuration', () => {
  it('has working defaults for development', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 4000,
      host: '0.0.0.0',
      databaseUrl: undefined,
      production: false,
      logLevel: 'info',
      graphiql: true,
    });
    expect(config.dataDir).toMatch(/\.data$/);
  });

  it.each([
    [{ PORT: 'abc' }, /PORT must be a whole number from 0 to 65535 \(got "abc"\)/],
    [{ PORT: '70000' }, /PORT/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    [{ DATABASE_URL: 'mysql://x@y/z' }, /DATABASE_URL must start with postgres:\/\//],
    [{ DATABASE_URL: 'not a url' }, /DATABASE_URL is not a valid URL/],
    [{ CURSOR_SECRET: 'short' }, /CURSOR_SECRET must be at least 32 characters/],
    [{ NODE_ENV: 'production' }, /CURSOR_SECRET is required when NODE_ENV=production/],
    [{ API_KEY_PEPPER: 'short' }, /API_KEY_PEPPER must be at least 32 characters/],
    [{ GRAPHIQL: 'maybe' }, /GRAPHIQL must be true or false/],
  ])('refuses %j with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('never echoes a database password in its errors', () => {
    try {
      loadConfig({ DATABASE_URL: 'mysql://user:hunter2secret@db/x' });
    } catch (error) {
      expect((error as Error).message).not.toContain('hunter2secret');
      return;
    }
    throw new Error('expected a ConfigError');
  });

  it('turns on production policies with NODE_ENV=production', () => {
    const secrets = {
      CURSOR_SECRET: 'x'.repeat(40),
      API_KEY_PEPPER: 'y'.repeat(40),
      JWT_JWKS_URL: 'https://id.example.com/.well-known/jwks.json',
      JWT_ISSUER: 'https://id.example.com/',
      JWT_AUDIENCE: 'portico',
    };
    const config = loadConfig({ NODE_ENV: 'production', ...secrets });
    expect(config.production).toBe(true);
    expect(config.graphiql).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', ...secrets, GRAPHIQL: 'true' }).graphiql).toBe(true);
    expect(() => loadConfig({ NODE_ENV: 'production', CURSOR_SECRET: 'x'.repeat(40) })).toThrow(/API_KEY_PEPPER is required/);
    expect(() => loadConfig({ ...secrets, NODE_ENV: 'production', JWT_ISSUER: '' })).toThrow(/JWT_ISSUER and JWT_AUDIENCE/);
    expect(() => loadConfig({ ...secrets, JWT_SECRET: 'z'.repeat(40) })).toThrow(/only one of/);
  });
});
