// Webhook endpoints: the URLs that receive events, managed by the API key that registered them.
import {
  DESCRIPTION_MAX_LENGTH,
  ROTATION_OVERLAP_S,
  createEndpoint,
  deleteEndpoint,
  findEndpoint,
  listEndpoints,
  rotateEndpointSecret,
  updateEndpoint,
  type EndpointOwner,
  type EndpointPage,
  type EndpointRecord,
} from '../../services/webhook-endpoints.ts';
import { PAGE_SIZE } from '../../services/limits.ts';
import { WEBHOOK_URL_MAX_LENGTH } from '../../webhooks/url-policy.ts';
import { actsForEveryone } from '../acts-for.ts';
import { ARGUMENTS, idOf } from '../arguments.ts';
import { builder } from '../builder.ts';
import type { GraphQLContext } from '../context.ts';
import { EventTypeRef } from './event.ts';

export function ownerOf(ctx: GraphQLContext): EndpointOwner {
  return { lineageId: ctx.auth.key.lineageId, admin: actsForEveryone(ctx) };
}

const WebhookEndpointRef = builder.objectRef<EndpointRecord>('WebhookEndpoint').implement({
  description: 'A URL that receives events as signed webhooks. It belongs to the API key that registered it.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Opaque, prefixed `wep_`.' }),
    url: t.exposeString('url', { description: 'Where deliveries are sent, as registered.' }),
    events: t.expose('events', {
      type: [EventTypeRef],
      nullable: true,
      description: 'The event types it receives; null: every type, including types added later.',
    }),
    description: t.exposeString('description', { nullable: true, description: "The owner's note about it; null if none." }),
    enabled: t.exposeBoolean('enabled', {
      description: 'A disabled endpoint receives nothing; events meanwhile are not queued for it, and its queued deliveries wait.',
    }),
    disabledReason: t.exposeString('disabledReason', {
      nullable: true,
      description: 'Why the service disabled it (its receiver answered 410 Gone); null once enabled again.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was registered.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed.' }),
    previousSecretExpiresAt: t.expose('previousSecretExpiresAt', {
      type: 'DateTime',
      nullable: true,
      description: 'During a secret rotation, when the previous secret stops signing; null otherwise.',
    }),
    secret: t.exposeString('secret', {
      nullable: true,
      description:
        'The signing secret (`whsec_…`), in the answer that created the endpoint or rotated its secret only; null everywhere else. Store it then.',
    }),
  }),
});

const WebhookEndpointListRef = builder.objectRef<EndpointPage>('WebhookEndpointList').implement({
  description: 'A page of webhook endpoints, oldest first.',
  fields: (t) => ({
    items: t.expose('items', { type: [WebhookEndpointRef], description: 'The endpoints of the page, oldest first.' }),
    nextCursor: t.exposeString('nextCursor', { nullable: true, description: 'Pass as `cursor` for the next page; null at the end.' }),
  }),
});

const MANAGE = { scope: 'webhooks:manage' } as const;

builder.queryFields((t) => ({
  webhookEndpoints: t.field({
    authScopes: MANAGE,
    type: WebhookEndpointListRef,
    nullable: true,
    description: `This API key's webhook endpoints (an admin key's: every one), oldest first. \`limit\`: 1 to ${PAGE_SIZE.max}, default ${PAGE_SIZE.default}.`,
    args: { limit: t.arg.int({ description: ARGUMENTS.limit }), cursor: t.arg.string({ description: ARGUMENTS.cursor }) },
    resolve: (_root, args, ctx) => listEndpoints(ctx.em(), ctx.cursors, ownerOf(ctx), args),
  }),
  webhookEndpoint: t.field({
    authScopes: MANAGE,
    type: WebhookEndpointRef,
    nullable: true,
    description: "The webhook endpoint with this id, or null if there is none (or it is another API key's).",
    args: { id: t.arg.id({ required: true, description: idOf('endpoint (`wep_…`)') }) },
    resolve: (_root, args, ctx) => findEndpoint(ctx.em(), ownerOf(ctx), String(args.id)),
  }),
}));

const URL_RULES = `An absolute https URL (http outside production) of at most ${WEBHOOK_URL_MAX_LENGTH} characters, without credentials, whose host is and resolves to public addresses only.`;

const CreateWebhookEndpointInput = builder.inputType('CreateWebhookEndpointInput', {
  description: 'A URL to receive events, and which.',
  fields: (t) => ({
    url: t.string({ required: true, description: URL_RULES }),
    events: t.field({ type: [EventTypeRef], description: 'The event types to receive; absent or null: every type.' }),
    description: t.string({ description: `At most ${DESCRIPTION_MAX_LENGTH} characters.` }),
  }),
});

const UpdateWebhookEndpointInput = builder.inputType('UpdateWebhookEndpointInput', {
  description: 'Only the fields given change. `events: null` subscribes to every type; `description: null` clears it.',
  fields: (t) => ({
    url: t.string({ description: URL_RULES }),
    events: t.field({ type: [EventTypeRef], description: 'The event types to receive; null: every type.' }),
    description: t.string({ description: `At most ${DESCRIPTION_MAX_LENGTH} characters; null clears it.` }),
    enabled: t.boolean({ description: 'false stops deliveries to it (none are queued meanwhile); true resumes them.' }),
  }),
});

const RotateWebhookEndpointSecretInput = builder.inputType('RotateWebhookEndpointSecretInput', {
  description: 'How the old signing secret retires.',
  fields: (t) => ({
    overlapSeconds: t.int({
      description: `How long the old secret keeps signing beside the new one: 0 to ${ROTATION_OVERLAP_S.max}, default ${ROTATION_OVERLAP_S.default} (24 hours).`,
    }),
  }),
});

builder.mutationFields((t) => ({
  createWebhookEndpoint: t.field({
    authScopes: MANAGE,
    type: WebhookEndpointRef,
    description:
      'Registers a URL to receive events and queues a `ping` event for it alone. The answer holds the signing secret: the only time it is shown.',
    args: { input: t.arg({ type: CreateWebhookEndpointInput, required: true, description: 'The endpoint.' }) },
    resolve: (_root, args, ctx) => createEndpoint(ctx.em(), ctx.webhooks, ownerOf(ctx), args.input),
  }),
  updateWebhookEndpoint: t.field({
    authScopes: MANAGE,
    type: WebhookEndpointRef,
    description: 'Changes the fields given; NOT_FOUND if this API key has no such endpoint.',
    args: {
      id: t.arg.id({ required: true, description: idOf('endpoint') }),
      input: t.arg({ type: UpdateWebhookEndpointInput, required: true, description: 'The fields to change.' }),
    },
    resolve: (_root, args, ctx) => updateEndpoint(ctx.em(), ctx.webhooks, ownerOf(ctx), String(args.id), args.input),
  }),
  deleteWebhookEndpoint: t.field({
    authScopes: MANAGE,
    type: 'ID',
    description: "Deletes the endpoint (its deliveries not yet made go with it); returns the deleted endpoint's id.",
    args: { id: t.arg.id({ required: true, description: idOf('endpoint (`wep_…`)') }) },
    resolve: (_root, args, ctx) => deleteEndpoint(ctx.em(), ownerOf(ctx), String(args.id)),
  }),
  rotateWebhookEndpointSecret: t.field({
    authScopes: MANAGE,
    type: WebhookEndpointRef,
    description: 'Gives the endpoint a new signing secret, shown in this answer only; the old one keeps signing beside it for the overlap.',
    args: {
      id: t.arg.id({ required: true, description: idOf('endpoint') }),
      input: t.arg({ type: RotateWebhookEndpointSecretInput, description: 'How the old secret retires; none: the default overlap.' }),
    },
    resolve: (_root, args, ctx) => rotateEndpointSecret(ctx.em(), ctx.webhooks, ownerOf(ctx), String(args.id), args.input?.overlapSeconds),
  }),
}));
