// Events: the feed of every recorded change (a Relay connection, and the page REST serves), one event
// by id, and the enum of event types.
import { EVENT_TYPES, EVENT_TYPE_NAMES, PING, enumNameOf } from '../../webhooks/event-types.ts';
import { findEvent, listEvents, type EventRecord } from '../../services/events.ts';
import { PAGE_SIZE } from '../../services/limits.ts';
import { ARGUMENTS, idOf } from '../arguments.ts';
import { builder } from '../builder.ts';
import { connectionOf } from '../connection.ts';

export const EventTypeRef = builder.enumType('EventType', {
  description:
    "The kinds of event. Events and webhooks name them as written in each value's description (e.g. `user.created`), as the `type` of an event.",
  values: Object.fromEntries(
    EVENT_TYPE_NAMES.map((type) => [enumNameOf(type), { value: type, description: `\`${type}\`: ${EVENT_TYPES[type]}` }]),
  ),
});

const TYPES = EVENT_TYPE_NAMES.map((type) => `\`${type}\``).join(', ');

const EventRef = builder.objectRef<EventRecord>('Event').implement({
  description: 'A change to a resource, recorded in the same transaction as the change. Webhooks deliver exactly this.',
  fields: (t) => ({
    id: t.exposeID('id', { description: "Opaque, prefixed `evt_`; the receivers' deduplication key." }),
    type: t.exposeString('type', { description: `One of ${TYPES} (and \`${PING}\` in webhooks only).` }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the change was made.' }),
    data: t.expose('data', {
      type: 'JSON',
      description: '`{ "object": … }`: the resource as REST\'s GET shows it; for `user.deleted`, the user as it was.',
    }),
  }),
});

const EventConnection = builder.connectionObject(
  {
    type: EventRef,
    name: 'EventConnection',
    description: 'A page of the feed, oldest first (a Relay connection, paged forward only: `hasPreviousPage` is always false).',
  },
  { description: 'An event on the page, with its cursor.' },
);

/** The feed's promise, paged by the argument named `cursor`. */
const feed = (cursor: string) =>
  `Events oldest first (newest last): a transaction's events appear once every transaction that began before it has ended, so paging with \`${cursor}\` sees each event exactly once. At the end of the feed keep the last cursor and ask again later for what follows.`;

builder.queryFields((t) => ({
  events: t.field({
    authScopes: { scope: 'webhooks:manage' },
    type: EventConnection,
    nullable: true,
    description: `${feed('after')} \`first\`: 1 to ${PAGE_SIZE.max}, default ${PAGE_SIZE.default}; \`type\`: only events of that type.`,
    args: {
      first: t.arg.int({ description: ARGUMENTS.first }),
      after: t.arg.string({ description: ARGUMENTS.after }),
      type: t.arg({ type: EventTypeRef, description: 'Only events of this type.' }),
    },
    resolve: async (_root, args, ctx) => connectionOf(await listEvents(ctx.sql, ctx.cursors, args)),
  }),
  event: t.field({
    authScopes: { scope: 'webhooks:manage' },
    type: EventRef,
    nullable: true,
    description: 'The event with this id, or null if there is none (or it is past its retention).',
    args: { id: t.arg.id({ required: true, description: idOf('event (`evt_…`)') }) },
    resolve: (_root, args, ctx) => findEvent(ctx.sql, String(args.id)),
  }),
}));

interface EventList {
  items: EventRecord[];
  nextCursor: string | null;
  hasMore: boolean;
}

const EventListRef = builder.objectRef<EventList>('EventList').implement({
  description: 'A page of the feed, oldest first.',
  fields: (t) => ({
    items: t.expose('items', { type: [EventRef], description: 'The events of the page, oldest first.' }),
    nextCursor: t.exposeString('nextCursor', {
      nullable: true,
      description:
        'Pass as `cursor` for the events after this page. Given at the end of the feed too (the position to ask again from later); null only when the feed has nothing yet.',
    }),
    hasMore: t.exposeBoolean('hasMore', { description: 'Whether more events follow right now.' }),
  }),
});

builder.queryField('eventList', (t) =>
  t.field({
    authScopes: { scope: 'webhooks:manage' },
    type: EventListRef,
    nullable: true,
    description: `${feed('cursor')} \`limit\`: 1 to ${PAGE_SIZE.max}, default ${PAGE_SIZE.default}; \`type\`: only events of that type.`,
    args: {
      limit: t.arg.int({ description: ARGUMENTS.limit }),
      cursor: t.arg.string({ description: ARGUMENTS.cursor }),
      type: t.arg({ type: EventTypeRef, description: 'Only events of this type.' }),
    },
    resolve: async (_root, args, ctx) => {
      const page = await listEvents(
        ctx.sql,
        ctx.cursors,
        { first: args.limit, after: args.cursor, type: args.type },
        { first: 'limit', after: 'cursor' },
      );
      return {
        items: page.items.map((edge) => edge.node),
        nextCursor: page.items.at(-1)?.cursor ?? args.cursor ?? null,
        hasMore: page.hasNextPage,
      };
    },
  }),
);
