// `npm run webhooks -- <command>`: webhook endpoints from the command line, as an operator (who sees
// and manages every key's endpoints). A new or rotated signing secret is printed once.
//   create --key KEY_ID --url URL [--events user.created,order.created] [--description TEXT] [--json]
//   list [--key KEY_ID] [--json]      update ID [--url URL] [--events a,b|all] [--description TEXT] [--enable|--disable] [--json]
//   rotate ID [--overlap 24h] [--json]      delete ID [--json]
//   deliveries ID [--status dead] [--json]   resend ID EVENT_ID [--json]   resend-dead ID [--from ISO] [--to ISO] [--json]
import { commandLine, refuseFlagsNotTaken, usageError, withDatabase } from './command-line.ts';
import { ApiKey, DELIVERY_STATES } from '../db/entities/index.ts';
import { sqlOf } from '../db/sql.ts';
import { deliveryResource, listDeliveries, resendDeadDeliveries, resendDelivery } from '../services/webhook-deliveries.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { requireId } from '../services/validation.ts';
import { CursorCodec } from '../pagination/cursor.ts';
import { resolveSecret } from '../secrets.ts';
import {
  ROTATION_OVERLAP_S,
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
import { instantOf } from '../instant.ts';
import { EVENT_TYPE_NAMES } from '../webhooks/event-types.ts';

const USAGE = `usage: npm run webhooks -- create --key KEY_ID --url URL [--events ${EVENT_TYPE_NAMES.join(',')}] [--description TEXT] [--json]
       npm run webhooks -- list [--key KEY_ID] [--json]
       npm run webhooks -- update ENDPOINT_ID [--url URL] [--events a,b|all] [--description TEXT] [--enable|--disable] [--json]
       npm run webhooks -- rotate ENDPOINT_ID [--overlap 24h] [--json]
       npm run webhooks -- delete ENDPOINT_ID [--json]
       npm run webhooks -- deliveries ENDPOINT_ID [--status ${DELIVERY_STATES.join('|')}] [--json]
       npm run webhooks -- resend ENDPOINT_ID EVENT_ID [--json]
       npm run webhooks -- resend-dead ENDPOINT_ID [--from 2026-11-22T00:00:00Z] [--to …] [--json]`;

/** The flags each command takes. */
const TAKES: Record<string, readonly string[]> = {
  create: ['key', 'url', 'events', 'description', 'json'],
  list: ['key', 'json'],
  update: ['url', 'events', 'description', 'enable', 'disable', 'json'],
  rotate: ['overlap', 'json'],
  delete: ['json'],
  deliveries: ['status', 'json'],
  resend: ['json'],
  'resend-dead': ['from', 'to', 'json'],
};

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
  overlap: { type: 'string' },
  status: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  json: { type: 'boolean' },
});
const [command, id, eventId] = positionals;
if (!command || !Object.hasOwn(TAKES, command)) fail(command ? `unknown command "${command}"` : 'a command is required');
refuseFlagsNotTaken(USAGE, command, values, TAKES[command]!);
if (command !== 'create' && command !== 'list' && !id) fail(`${command} needs the id of an endpoint (see \`webhooks list\`)`);
if (command === 'resend' && !eventId) fail('resend needs the id of the event to send again (see `webhooks deliveries`)');
// One endpoint per command: a second id, say, would be ignored while the operator believed it done.
const extra = positionals[command === 'create' || command === 'list' ? 1 : command === 'resend' ? 3 : 2];
if (extra !== undefined) fail(`unexpected argument "${extra}"`);
/** `--from`/`--to`: an ISO 8601 instant with its time zone. */
function instant(name: string, raw: string | undefined): Date | undefined {
  if (raw === undefined) return undefined;
  return instantOf(raw) ?? fail(`--${name} takes an ISO 8601 instant with a time zone, like 2026-11-22T00:00:00Z`);
}
const window = { from: instant('from', values.from), to: instant('to', values.to) };
if (command === 'create' && (!values.key || !values.url)) fail('create needs --key (the API key that owns the endpoint) and --url');
if (values.enable && values.disable) fail('give --enable or --disable, not both');
if (command === 'update' && ['url', 'events', 'description', 'enable', 'disable'].every((flag) => !(flag in values))) {
  fail('update needs something to change: --url, --events, --description, --enable or --disable');
}
const overlapMs = parseDuration(values.overlap ?? '24h');
if (overlapMs === undefined) fail('--overlap takes a duration like 0s, 15m, 24h or 7d');
// The service's own refusal counts in seconds, which this flag does not.
if (overlapMs % 1000 !== 0 || overlapMs > ROTATION_OVERLAP_S.max * 1000) {
  fail(`--overlap must be a duration from 0s to ${ROTATION_OVERLAP_S.max / 86_400}d in whole seconds (got ${values.overlap})`);
}

/** The flag each field the service checks comes from, for errors. */
const FLAG_OF: Record<string, string> = {
  key: '--key',
  url: '--url',
  events: '--events',
  description: '--description',
  status: '--status',
  overlapSeconds: '--overlap',
  from: '--from',
  to: '--to',
};

const describe = (endpoint: EndpointRecord) => ({ ...endpointResource(endpoint), ...(endpoint.secret ? { secret: endpoint.secret } : {}) });
const line = (endpoint: EndpointRecord) =>
  `${endpoint.id}  ${endpoint.enabled ? 'enabled ' : 'disabled'}  ${endpoint.url}  [${endpoint.events?.join(',') ?? 'all events'}]`;
const print = (json: unknown, text: string) =>
  process.stdout.write(values.json === true ? `${JSON.stringify(json, null, 2)}\n` : `${text}\n`);
const SHOWN_ONCE = 'This is the only time the signing secret is shown; store it now.';

await withDatabase({ usage: USAGE, flags: FLAG_OF }, async ({ config, db }) => {
  const sql = await sqlOf(db.orm);
  const settings = webhookSettings(
    config.webhooks,
    await resolveSecret(config.webhooks.secretKey, config.dataDir, 'webhook-secret-key'),
    config.databasePoolMax,
  );
  const em = db.orm.em.fork();
  const keyOf = async (keyId: string): Promise<ApiKey> => {
    // A malformed id is a mistake in the command (status 2), an unknown one a refusal (1).
    const key = await em.findOne(ApiKey, { id: requireId('apiKey', 'key', keyId) });
    if (!key) throw new NotFoundError(`No API key has the id ${keyId} (see \`npm run keys -- list\`).`);
    return key;
  };
  /** The owner a `--key` names: that key's lineage. */
  const ownerOf = async (keyId: string): Promise<EndpointOwner> => ({ lineageId: (await keyOf(keyId)).lineageId, admin: false });
  /** The owner of a new endpoint: a key that can still manage it (not revoked, not expired). */
  const liveOwnerOf = async (keyId: string): Promise<EndpointOwner> => {
    const key = await keyOf(keyId);
    if (key.revokedAt || (key.expiresAt && key.expiresAt <= new Date())) {
      throw new ConflictError(`API key ${keyId} is revoked or expired, and could never manage an endpoint it owned; use a live key.`);
    }
    return { lineageId: key.lineageId, admin: false };
  };
  const operator: EndpointOwner = { lineageId: '', admin: true };
  if (command === 'create') {
    const endpoint = await createEndpoint(em, settings, await liveOwnerOf(values.key!), {
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
  } else if (command === 'deliveries') {
    const cursors = new CursorCodec(await resolveSecret(config.cursorSecret, config.dataDir, 'cursor-secret'));
    const page = await listDeliveries(em, sql, cursors, operator, { endpointId: id!, status: values.status, limit: 100 });
    const when = (at: number | null) => (at === null ? '' : new Date(at).toISOString());
    const text = page.items.map(
      (d) =>
        `${d.eventId}  ${d.eventType.padEnd(13)}  ${d.status.padEnd(9)}  ${d.attempts.length} attempts  ${when(d.finishedAt ?? d.nextAttemptAt)}  ${d.attempts.at(-1)?.error ?? ''}`,
    );
    const more = '(the newest 100; page further through the API)';
    if (page.nextCursor) text.push(more);
    // With --json the list stays what a machine parses; the note goes beside it.
    if (page.nextCursor && values.json === true) process.stderr.write(`${more}\n`);
    print(page.items.map(deliveryResource), text.length === 0 ? 'no deliveries' : text.join('\n'));
  } else if (command === 'resend') {
    const delivery = await resendDelivery(em, sql, operator, id!, eventId!);
    print(deliveryResource(delivery), `queued ${delivery.eventId} for ${id} again`);
  } else if (command === 'resend-dead') {
    const { queued, remaining } = await resendDeadDeliveries(em, sql, operator, id!, window);
    print(
      { queued, remaining },
      `queued ${queued} dead deliveries of ${id} again${remaining > 0 ? `; ${remaining} remain: run it again for them` : ''}`,
    );
  } else {
    print({ id: await deleteEndpoint(em, operator, id!) }, `deleted ${id}`);
  }
});
