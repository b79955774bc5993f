import pkg from '../package.json' with { type: 'json' };

/** The release of the service, as package.json states it; the OpenAPI document carries it. */
export const VERSION: string = pkg.version;
