// `npm run webhooks -- <command>`: webhook endpoints from the command line, as an operator (who sees
// and manages every key's endpoints). A new or rotated signing secret is printed once.
//   create --key KEY_ID --url URL [--events user.created,order.created] [--description TEXT] [--json]
//   list [--key KEY_ID] [--json]      update ID [--url URL] [--events a,b|all] [--description TEXT] [--enable|--disable] [--json]
//   rotate ID [--overlap 24h] [--json]      delete ID [--json]
import { commandLine, usageError, withDatabase } from './command-line.ts';
import { ApiKey } from '../db/entities/index.ts';
import { NotFoundError } from '../errors.ts';
import { CursorCodec } from '../pagination/cursor.ts';
import { resolveSecret } from '../secrets.ts';
import {
  createEndpoint,
  deleteEndpoint,
  endpointResource,
  listEndpoints,
  rotateEndpointSecret,
  updateEndpoint,
  webhookSettings,
  type EndpointOwner,
  type EndpointRecord,
} from '../services/webhook-endpoints.ts';
import { parseDuration } from '../duration.ts';
import { EVENT_TYPE_NAMES } from '../webhooks/event-types.ts';

const USAGE = `usage: npm run webhooks -- create --key KEY_ID --url URL [--events ${EVENT_TYPE_NAMES.join(',')}] [--description TEXT] [--json]
       npm run webhooks -- list [--key KEY_ID] [--json]
       npm run webhooks -- update ENDPOINT_ID [--url URL] [--events a,b|all] [--description TEXT] [--enable|--disable] [--json]
       npm run webhooks -- rotate ENDPOINT_ID [--overlap 24h] [--json]
       npm run webhooks -- delete ENDPOINT_ID [--json]`;

const COMMANDS = ['create', 'list', 'update', 'rotate', 'delete'];

/** `--events`: event types as events name them (`user.created`) or as the API's enum does (`USER_CREATED`); `all` for every type. */
function eventsOption(raw: string | undefined): string[] | null | undefined {
  if (raw === undefined) return undefined;
  if (raw.trim() === 'all') return null;
  return raw.split(',').map((type) => type.trim().toLowerCase().replace('_', '.'));
}

function fail(message: string): never {
  return usageError(USAGE, message);
}

const { values, positionals } = commandLine(USAGE, {
  key: { type: 'string' },
  url: { type: 'string' },
  events: { type: 'string' },
  description: { type: 'string' },
  enable: { type: 'boolean' },
  disable: { type: 'boolean' },
  overlap: { type: 'string', default: '24h' },
  json: { type: 'boolean', default: false },
});
const [command, id] = positionals;
if (!command || !COMMANDS.includes(command)) fail(command ? `unknown command "${command}"` : 'a command is required');
if (['update', 'rotate', 'delete'].includes(command) && !id) fail(`${command} needs the id of an endpoint (see \`webhooks list\`)`);
if (command === 'create' && (!values.key || !values.url)) fail('create needs --key (the API key that owns the endpoint) and --url');
if (values.enable && values.disable) fail('give --enable or --disable, not both');
const overlapMs = parseDuration(values.overlap);
if (overlapMs === undefined) fail('--overlap takes a duration like 0s, 15m, 24h or 7d');

const describe = (endpoint: EndpointRecord) => ({ ...endpointResource(endpoint), ...(endpoint.secret ? { secret: endpoint.secret } : {}) });
const line = (endpoint: EndpointRecord) =>
  `${endpoint.id}  ${endpoint.enabled ? 'enabled ' : 'disabled'}  ${endpoint.url}  [${endpoint.events?.join(',') ?? 'all events'}]`;
const print = (json: unknown, text: string) => process.stdout.write(values.json ? `${JSON.stringify(json, null, 2)}\n` : `${text}\n`);
const SHOWN_ONCE = 'This is the only time the signing secret is shown; store it now.';

await withDatabase(async ({ config, db }) => {
  const settings = webhookSettings(config.webhooks, await resolveSecret(config.webhooks.secretKey, config.dataDir, 'webhook-secret-key'));
  const em = db.orm.em.fork();
  /** The owner a `--key` names: that key's lineage. */
  const ownerOf = async (keyId: string): Promise<EndpointOwner> => {
    const key = await em.findOne(ApiKey, { id: keyId });
    if (!key) throw new NotFoundError(`No API key has the id ${keyId} (see \`npm run keys -- list\`).`);
    return { lineageId: key.lineageId, admin: false };
  };
  const operator: EndpointOwner = { lineageId: '', admin: true };
  if (command === 'create') {
    const endpoint = await createEndpoint(em, settings, await ownerOf(values.key!), {
      url: values.url!,
      events: eventsOption(values.events) ?? null,
      description: values.description ?? null,
    });
    print(describe(endpoint), `created ${line(endpoint)}\n\n  ${endpoint.secret}\n\n${SHOWN_ONCE}\nA ping event is queued for it.`);
  } else if (command === 'list') {
    const owner = values.key ? await ownerOf(values.key) : operator;
    const cursors = new CursorCodec(await resolveSecret(config.cursorSecret, config.dataDir, 'cursor-secret'));
    const endpoints: EndpointRecord[] = [];
    for (let cursor: string | null = null; ;) {
      const page = await listEndpoints(em, cursors, owner, { limit: 100, cursor });
      endpoints.push(...page.items);
      cursor = page.nextCursor;
      if (cursor === null) break;
    }
    print(endpoints.map(describe), endpoints.length === 0 ? 'no webhook endpoints' : endpoints.map(line).join('\n'));
  } else if (command === 'update') {
    const endpoint = await updateEndpoint(em, settings, operator, id!, {
      url: values.url,
      events: eventsOption(values.events),
      description: values.description,
      enabled: values.enable ? true : values.disable ? false : undefined,
    });
    print(describe(endpoint), `updated ${line(endpoint)}`);
  } else if (command === 'rotate') {
    const endpoint = await rotateEndpointSecret(em, settings, operator, id!, overlapMs / 1000);
    const until = endpoint.previousSecretExpiresAt ? `until ${endpoint.previousSecretExpiresAt.toISOString()}` : 'no longer';
    print(
      describe(endpoint),
      `rotated the secret of ${endpoint.id}; the old one signs beside it ${until}\n\n  ${endpoint.secret}\n\n${SHOWN_ONCE}`,
    );
  } else {
    print({ id: await deleteEndpoint(em, operator, id!) }, `deleted ${id}`);
  }
});
