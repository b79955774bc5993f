// Webhook endpoints: registering, listing, changing and deleting the URLs that receive events, and
// rotating their signing secrets. An endpoint belongs to the API key lineage that registered it (a
// rotated key's successor keeps it); a key sees and manages only its own, an admin key every one,
// and another key's endpoint is "not found" rather than "forbidden", so ids leak nothing.
import type { WebhookConfig } from '../config.ts';
import { LockMode } from '@mikro-orm/core';
import { WebhookEndpoint } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import type { EntityManager } from '../db/orm.ts';
import { isoOf } from '../db/records.ts';
import { ConflictError, NotFoundError, UnavailableError } from '../errors.ts';
import type { CursorCodec } from '../pagination/cursor.ts';
import { cursorOf, pageOf, positionAfter, type Keyset } from '../pagination/keyset.ts';
import { EVENT_TYPE_NAMES, enumNameOf, type EventType } from '../webhooks/event-types.ts';
import { queuePing } from '../webhooks/outbox.ts';
import { SecretBox } from '../webhooks/secret-box.ts';
import { newSigningSecret } from '../webhooks/signing-secret.ts';
import { urlRefusal, type Resolve, type UrlPolicy } from '../webhooks/url-policy.ts';
import { PAGE_SIZE } from './limits.ts';
import { InputCheck, requireId } from './validation.ts';

export const DESCRIPTION_MAX_LENGTH = 500;
/** A rotation's overlap: the old secret keeps signing beside the new one this long, by default and at most. */
export const ROTATION_OVERLAP_S = { default: 86_400, max: 7 * 86_400 } as const;

export interface WebhookSettings {
  box: SecretBox;
  urlPolicy: UrlPolicy;
  maxEndpointsPerKey: number;
  /** How host names are resolved for the address checks (tests give one that waits). */
  resolve?: Resolve;
  urlChecks: UrlChecks;
}

/**
 * URL checks under way. A check resolves the URL's host, which may take seconds, and a write that
 * holds a database connection meanwhile (one with an Idempotency-Key, whose transaction opens as it
 * starts; a document of several mutations) keeps it for as long: host names made slow on purpose
 * held every connection of the pool, and every other request waited. So one API key lineage has
 * one check under way at a time, and all of them together a quarter of the pool's connections;
 * past either, a check is refused at once with 503 (worth retrying).
 */
export class UrlChecks {
  /** The key lineages with a check under way: one each, so their number is the checks'. */
  readonly #underWay = new Set<string>();
  readonly #max: number;

  constructor(poolMax: number) {
    this.#max = Math.max(1, Math.floor(poolMax / 4));
  }

  async run<T>(lineageId: string, check: () => Promise<T>): Promise<T> {
    if (this.#underWay.has(lineageId)) {
      throw new UnavailableError(
        "Another of this API key's webhook URLs is being checked (its host resolved); retry once that request is answered.",
      );
    }
    if (this.#underWay.size >= this.#max) throw new UnavailableError('Too many webhook URLs are being checked right now; retry shortly.');
    this.#underWay.add(lineageId);
    try {
      return await check();
    } finally {
      this.#underWay.delete(lineageId);
    }
  }
}

/** `poolMax`: the database pool's size, which URL checks may hold a quarter of (UrlChecks). */
export function webhookSettings(config: WebhookConfig, secretKey: string, poolMax: number): WebhookSettings {
  return {
    box: new SecretBox(secretKey),
    urlPolicy: { allowHttp: config.allowHttp, allowedHosts: config.allowedHosts, revealAddresses: config.revealAddresses },
    maxEndpointsPerKey: config.maxEndpointsPerKey,
    urlChecks: new UrlChecks(poolMax),
  };
}

/** The answer for an endpoint `owner` cannot see: another key's is not found, as one that does not exist. */
export function endpointNotFound(owner: EndpointOwner, id: string): NotFoundError {
  return new NotFoundError(`No webhook endpoint${owner.admin ? '' : ' of this API key'} has the id ${id}.`);
}

/** Who manages endpoints: the calling key's lineage, and whether it is an admin key. */
export interface EndpointOwner {
  lineageId: string;
  admin: boolean;
}

/** An endpoint as every face shows it; `secret` only in the answer that created it or rotated its secret. */
export interface EndpointRecord {
  id: string;
  url: string;
  /** The types it receives; null: every type, including types added later. */
  events: EventType[] | null;
  description: string | null;
  enabled: boolean;
  /** Why the service disabled it (a receiver that answered 410 Gone). */
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** While a rotation's overlap lasts, when the previous secret stops signing. */
  previousSecretExpiresAt: Date | null;
  secret?: string;
}

export interface EndpointFields {
  url?: string | null;
  events?: readonly string[] | null;
  description?: string | null;
  enabled?: boolean | null;
}

/** The fields given, checked and normalised. */
interface CheckedFields {
  url?: string;
  events?: EventType[] | null;
  description?: string | null;
  enabled?: boolean;
}

function recordOf(endpoint: WebhookEndpoint, secret?: string): EndpointRecord {
  const live = endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt.getTime() > Date.now();
  return {
    id: endpoint.id,
    url: endpoint.url,
    // Only listed types are ever stored (checkFields).
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion
    events: (endpoint.eventTypes as EventType[] | null | undefined) ?? null,
    description: endpoint.description ?? null,
    enabled: endpoint.enabled,
    disabledReason: endpoint.disabledReason ?? null,
    createdAt: endpoint.createdAt,
    updatedAt: endpoint.updatedAt,
    previousSecretExpiresAt: live ? endpoint.previousSecretExpiresAt! : null,
    ...(secret === undefined ? {} : { secret }),
  };
}

/** The endpoint as REST's GET shows it (a ping carries it). */
export function endpointResource(endpoint: EndpointRecord): Record<string, unknown> {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events?.map(enumNameOf) ?? null,
    description: endpoint.description,
    enabled: endpoint.enabled,
    disabledReason: endpoint.disabledReason,
    createdAt: isoOf(endpoint.createdAt),
    updatedAt: isoOf(endpoint.updatedAt),
    previousSecretExpiresAt: endpoint.previousSecretExpiresAt && isoOf(endpoint.previousSecretExpiresAt),
    // Shown once, in the answer that creates or rotates it; null everywhere else.
    secret: null,
  };
}

/** Checks the fields given (all of them on creation); returns them normalised. */
async function checkFields(
  settings: WebhookSettings,
  owner: EndpointOwner,
  input: EndpointFields,
  creating: boolean,
): Promise<CheckedFields> {
  const check = new InputCheck();
  const fields: CheckedFields = {};
  if (input.url === null || (creating && input.url === undefined)) check.fail('url', input.url === null ? 'cannot be null' : 'is required');
  else if (input.url !== undefined) {
    // Stored as sent, so it must be storable first: the URL parser would quietly escape what is not.
    const url = check.storable('url', input.url);
    const refusal =
      url === undefined
        ? undefined
        : await settings.urlChecks.run(owner.lineageId, () => urlRefusal(url, settings.urlPolicy, settings.resolve));
    if (refusal) check.fail('url', refusal);
    else if (url !== undefined) fields.url = url;
  }
  if (input.events === null) fields.events = null;
  else if (input.events !== undefined) {
    if (input.events.length === 0) check.fail('events', 'must name at least one event type, or be null for every type');
    const events = new Set<EventType>();
    for (const type of input.events) {
      const known = check.oneOf('events', EVENT_TYPE_NAMES, type);
      if (known) events.add(known);
    }
    fields.events = [...events];
  }
  if (input.description !== undefined) {
    const description = (input.description === null ? '' : check.text('description', input.description)) || null;
    if (description !== null && [...description].length > DESCRIPTION_MAX_LENGTH) {
      check.fail('description', `must be at most ${DESCRIPTION_MAX_LENGTH} characters`);
    }
    fields.description = description;
  }
  if (input.enabled === null) check.fail('enabled', 'cannot be null');
  else if (input.enabled !== undefined) fields.enabled = input.enabled;
  check.done();
  return fields;
}

async function mustFind(em: EntityManager, owner: EndpointOwner, id: string, lockMode?: LockMode): Promise<WebhookEndpoint> {
  requireId('webhookEndpoint', 'id', id);
  const endpoint = await em.findOne(WebhookEndpoint, owner.admin ? { id } : { id, ownerKeyId: owner.lineageId }, { lockMode });
  if (!endpoint) throw endpointNotFound(owner, id);
  return endpoint;
}

/** Refuses a registration by a key that has as many endpoints as it may. */
async function refuseOverLimit(em: EntityManager, settings: WebhookSettings, owner: EndpointOwner): Promise<void> {
  const registered = await em.count(WebhookEndpoint, { ownerKeyId: owner.lineageId });
  if (registered >= settings.maxEndpointsPerKey) {
    throw new ConflictError(
      `This API key has ${registered} webhook endpoints, the most it may have (${settings.maxEndpointsPerKey}); delete one first.`,
    );
  }
}

/**
 * Registers an endpoint and queues a `ping` for it alone. The answer carries the signing secret: the
 * only time it is shown.
 */
export async function createEndpoint(
  em: EntityManager,
  settings: WebhookSettings,
  owner: EndpointOwner,
  input: EndpointFields,
): Promise<EndpointRecord> {
  // A key at its limit is refused before its URL's host is resolved: a lookup may take seconds.
  await refuseOverLimit(em, settings, owner);
  const fields = await checkFields(settings, owner, input, true);
  return em.transactional(async (tx) => {
    // One registration at a time per lineage, so the count below cannot be raced past the limit.
    await tx.execute(`select pg_advisory_xact_lock(hashtextextended(?, 1))`, [`webhook endpoints of ${owner.lineageId}`]);
    await refuseOverLimit(tx, settings, owner);
    const id = newId('webhookEndpoint');
    const secret = newSigningSecret();
    const endpoint = tx.create(WebhookEndpoint, {
      id,
      ownerKeyId: owner.lineageId,
      url: fields.url!,
      eventTypes: fields.events ?? null,
      description: fields.description ?? null,
      enabled: true,
      secret: settings.box.seal(secret, id),
    });
    await tx.flush();
    const record = recordOf(endpoint, secret);
    await queuePing(tx, id, endpointResource(record));
    return record;
  });
}

export async function findEndpoint(em: EntityManager, owner: EndpointOwner, id: string): Promise<EndpointRecord | null> {
  try {
    return recordOf(await mustFind(em, owner, id));
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

export interface EndpointPage {
  items: EndpointRecord[];
  nextCursor: string | null;
}

/** The caller's endpoints (an admin key: every one) in creation order, a page at a time. */
export async function listEndpoints(
  em: EntityManager,
  cursors: CursorCodec,
  owner: EndpointOwner,
  args: { limit?: number | null; cursor?: string | null },
): Promise<EndpointPage> {
  const check = new InputCheck();
  const limit = check.pageSize('limit', args.limit, PAGE_SIZE);
  check.done();
  // Ids sort in creation order; the cursor is bound to the caller's own list.
  const byId: Keyset<EndpointRecord> = {
    scope: `webhook-endpoints/${owner.admin ? 'all' : owner.lineageId}`,
    keyType: 'text',
    key: (endpoint) => endpoint.id,
    id: (endpoint) => endpoint.id,
  };
  const after = args.cursor == null ? undefined : positionAfter(byId, cursors, args.cursor, 'cursor')[1];
  const rows = await em.find(
    WebhookEndpoint,
    { ...(owner.admin ? {} : { ownerKeyId: owner.lineageId }), ...(after === undefined ? {} : { id: { $gt: after } }) },
    { orderBy: { id: 'asc' }, limit: limit! + 1 },
  );
  const { items, hasMore } = pageOf(
    rows.map((row) => recordOf(row)),
    limit!,
  );
  return { items, nextCursor: hasMore ? cursorOf(byId, cursors, items.at(-1)!) : null };
}

/** Changes the fields given; absent ones keep their value. */
export async function updateEndpoint(
  em: EntityManager,
  settings: WebhookSettings,
  owner: EndpointOwner,
  id: string,
  input: EndpointFields,
): Promise<EndpointRecord> {
  // Another key's endpoint is not found before the new URL's host is resolved: a lookup may take seconds.
  const endpoint = await mustFind(em, owner, id);
  const fields = await checkFields(settings, owner, input, false);
  if (fields.url !== undefined) endpoint.url = fields.url;
  if (fields.events !== undefined) endpoint.eventTypes = fields.events;
  if (fields.description !== undefined) endpoint.description = fields.description;
  if (fields.enabled !== undefined) endpoint.enabled = fields.enabled;
  if (fields.enabled) endpoint.disabledReason = null;
  await em.flush();
  return recordOf(endpoint);
}

/** Deletes the endpoint; its deliveries not yet made go with it. */
export async function deleteEndpoint(em: EntityManager, owner: EndpointOwner, id: string): Promise<string> {
  const endpoint = await mustFind(em, owner, id);
  await em.remove(endpoint).flush();
  return id;
}

/**
 * Gives the endpoint a new signing secret, shown in this answer only. For `overlapS` seconds the old
 * secret keeps signing beside it, so receivers can switch without missing a delivery; 0 retires it at once.
 */
export async function rotateEndpointSecret(
  em: EntityManager,
  settings: WebhookSettings,
  owner: EndpointOwner,
  id: string,
  overlapS: number | null | undefined,
): Promise<EndpointRecord> {
  const check = new InputCheck();
  const overlap = overlapS ?? ROTATION_OVERLAP_S.default;
  if (!Number.isInteger(overlap) || overlap < 0 || overlap > ROTATION_OVERLAP_S.max) {
    check.fail('overlapSeconds', `must be a whole number from 0 to ${ROTATION_OVERLAP_S.max}`);
  }
  check.done();
  // One rotation at a time per endpoint: each keeps the secret the one before it made as the old
  // one, so every secret answered signs (two at once kept the same old secret, losing one).
  return em.transactional(async (tx) => {
    const endpoint = await mustFind(tx, owner, id, LockMode.PESSIMISTIC_WRITE);
    const secret = newSigningSecret();
    // A secret sealed under an earlier WEBHOOK_SECRET_KEY cannot sign: keeping it would promise an
    // overlap that does not exist.
    const kept = overlap > 0 && opens(settings.box, endpoint.secret, id);
    endpoint.previousSecret = kept ? endpoint.secret : null;
    endpoint.previousSecretExpiresAt = kept ? new Date(Date.now() + overlap * 1000) : null;
    endpoint.secret = settings.box.seal(secret, id);
    await tx.flush();
    return recordOf(endpoint, secret);
  });
}

function opens(box: SecretBox, sealed: string, id: string): boolean {
  try {
    box.open(sealed, id);
    return true;
  } catch {
    return false;
  }
}

/**
 * An endpoint belongs to the key lineage that registered it; with no key of it left to use (each
 * revoked or expired), nobody but an admin could switch it off, and it would go on receiving every
 * user and order that changes: a leaked key's endpoint, say. Such endpoints are disabled, saying
 * why (an admin may enable one again, until the next upkeep). `lineageId` limits it to one lineage.
 */
const DISABLE_ENDPOINTS_OF_DEAD_KEYS = `with disabled as (
    update webhook_endpoints e set enabled = false, disabled_reason = ?, updated_at = now()
    where e.enabled and (?::text is null or e.owner_key_id = ?)
      and not exists (select 1 from api_keys k where k.lineage_id = e.owner_key_id
        and k.revoked_at is null and (k.expires_at is null or k.expires_at > now()))
    returning 1)
  select count(*)::int as n from disabled`;

/** At revocation, in its transaction: the revoked key's endpoints, when it leaves its lineage no key. */
export async function disableEndpointsOfRevokedKey(tx: EntityManager, lineageId: string, at: Date): Promise<void> {
  const reason = `The API key that registered it was revoked at ${at.toISOString()}; an admin key may enable it again.`;
  await tx.execute(DISABLE_ENDPOINTS_OF_DEAD_KEYS, [reason, lineageId, lineageId]);
}

/** The upkeep's part (services/purges.ts): every endpoint whose keys have all expired since; how many. */
export async function disableEndpointsOfDeadKeys(em: EntityManager): Promise<number> {
  const reason = `Every API key that could manage it has expired or was revoked (seen at ${new Date().toISOString()}); an admin key may enable it again.`;
  const rows = await em.execute<{ n: number }[]>(DISABLE_ENDPOINTS_OF_DEAD_KEYS, [reason, null, null]);
  return rows[0]?.n ?? 0;
}
