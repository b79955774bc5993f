// With CORS_ORIGINS set, whether an answer carries CORS fields depends on the Origin it was asked
// from: every answer says so (`Vary: Origin`), so that a cache in front (of the public assets, which
// may be stored) never gives one origin's copy to another. Added to whatever Vary the answer has.
import type { ServerPlugin } from './server-context.ts';

export function useVaryOrigin(corsOrigins: readonly string[]): ServerPlugin {
  if (corsOrigins.length === 0) return {};
  return {
    onResponse({ response }) {
      response.headers.append('vary', 'Origin');
    },
  };
}
