// The kinds of event the service records, by the name every event, webhook and header carries.

/** Each type and what it reports; `data.object` is the resource as REST's GET shows it. */
export const EVENT_TYPES = {
  'user.created': 'A user was created.',
  'user.updated': 'A user was changed (replaced or updated); `data.object` is the user after the change.',
  'user.deleted': 'A user was deleted, with their orders; `data.object` is the user as it was.',
  'order.created': 'An order was placed.',
} as const;
export type EventType = keyof typeof EVENT_TYPES;
export const EVENT_TYPE_NAMES: readonly EventType[] = Object.keys(EVENT_TYPES).filter((name): name is EventType => name in EVENT_TYPES);

/**
 * Queued for one endpoint alone when it is registered, so its owner sees it receive; `data.object` is
 * the endpoint. Not a change to a resource, so not in the feed, and not something to subscribe to.
 */
export const PING = 'ping';

/** A type's name in the GraphQL enum (and so in REST bodies): `user.created` → `USER_CREATED`. */
export function enumNameOf(type: EventType): string {
  return type.toUpperCase().replace('.', '_');
}
