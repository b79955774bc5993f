// The paths the service answers besides the REST routes (rest/routes.ts is the table of those).
export const GRAPHQL_PATH = '/graphql';
/** GraphiQL's scripts and styles, served by the service itself (when GraphiQL is on). */
export const GRAPHIQL_ASSETS_PATH = '/graphiql/assets/';
export const OPENAPI_PATH = '/openapi.json';
/** The API reference page; its assets are served below it. */
export const DOCS_PATH = '/docs';
/** Liveness: the process is up. */
export const HEALTH_PATH = '/health';
/** Readiness: the service can serve (its database answers). */
export const READY_PATH = '/ready';
/** What the service is and where its faces are, for anyone who opens its address. */
export const INDEX_PATH = '/';
/** Prometheus metrics: on METRICS_PORT, or here behind METRICS_TOKEN. */
export const METRICS_PATH = '/metrics';
