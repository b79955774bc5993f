// An endpoint's deliveries and their attempts (the dead-letter queue is the `dead` ones), and re-sending.
import { ATTEMPTS_KEPT } from '../../webhooks/deliveries.ts';
import { RESEND_BATCH } from '../../services/webhook-deliveries.ts';
import { DELIVERY_STATES } from '../../db/entities/index.ts';
import { PAGE_SIZE } from '../../services/limits.ts';
import {
  listDeliveries,
  resendDeadDeliveries,
  resendDelivery,
  type AttemptRecord,
  type DeliveryPage,
  type DeliveryRecord,
} from '../../services/webhook-deliveries.ts';
import { ARGUMENTS, idOf } from '../arguments.ts';
import { builder } from '../builder.ts';
import { ownerOf } from './webhook-endpoint.ts';

const STATES = DELIVERY_STATES.map((state) => `\`${state}\``).join(', ');

const WebhookAttemptRef = builder.objectRef<AttemptRecord>('WebhookAttempt').implement({
  description: 'One attempt to deliver an event.',
  fields: (t) => ({
    number: t.exposeInt('number', {
      description: 'Counts every attempt of the delivery, re-sends included; sent as `X-Portico-Delivery-Attempt`.',
    }),
    startedAt: t.expose('startedAt', { type: 'DateTime', description: 'When the attempt began.' }),
    durationMs: t.exposeInt('durationMs', { description: 'How long it took, in milliseconds, until the answer or the failure.' }),
    statusCode: t.exposeInt('statusCode', { nullable: true, description: "The receiver's HTTP status; null when none came." }),
    error: t.exposeString('error', {
      nullable: true,
      description: 'What went wrong (a status, a time-out, a refused connection); null on success.',
    }),
    responseBody: t.exposeString('responseBody', { nullable: true, description: 'The first KiB of the response body.' }),
    signature: t.exposeString('signature', { description: 'The `X-Portico-Signature-256` header sent.' }),
  }),
});

const WebhookDeliveryRef = builder.objectRef<DeliveryRecord>('WebhookDelivery').implement({
  description: 'One event to one endpoint.',
  fields: (t) => ({
    eventId: t.exposeID('eventId', { description: 'The event delivered (`evt_…`).' }),
    eventType: t.exposeString('eventType', { description: 'Its type (`ping` for the event that greets a new endpoint).' }),
    status: t.exposeString('status', {
      description: `One of ${STATES}: \`failed\` has another attempt scheduled (held while its endpoint is disabled); \`dead\` is in the dead-letter queue, re-sent only by hand.`,
    }),
    nextAttemptAt: t.expose('nextAttemptAt', {
      type: 'DateTime',
      nullable: true,
      description:
        'When the next attempt is due; null once it succeeded or went dead, and while its endpoint is disabled (it waits until the endpoint is enabled again).',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the delivery was queued (with its event).' }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true, description: 'When it succeeded or went dead.' }),
    attempts: t.expose('attempts', {
      type: [WebhookAttemptRef],
      description: `Its latest ${ATTEMPTS_KEPT} attempts, oldest first (older ones are deleted; \`number\` counts them all).`,
    }),
  }),
});

const WebhookDeliveryListRef = builder.objectRef<DeliveryPage>('WebhookDeliveryList').implement({
  description: "A page of an endpoint's deliveries, newest first.",
  fields: (t) => ({
    items: t.expose('items', { type: [WebhookDeliveryRef], description: 'The deliveries of the page, newest first.' }),
    nextCursor: t.exposeString('nextCursor', { nullable: true, description: 'Pass as `cursor` for the next page; null at the end.' }),
  }),
});

const WebhookRedeliveryRef = builder.objectRef<{ queued: number; remaining: number }>('WebhookRedelivery').implement({
  description: 'What a re-send of dead deliveries queued.',
  fields: (t) => ({
    queued: t.exposeInt('queued', { description: `Dead deliveries queued again: at most ${RESEND_BATCH}, the oldest events first.` }),
    remaining: t.exposeInt('remaining', { description: 'Dead deliveries of the window left to re-send: send the request again for them.' }),
  }),
});

const MANAGE = { scope: 'webhooks:manage' } as const;

builder.queryField('webhookDeliveries', (t) =>
  t.field({
    authScopes: MANAGE,
    type: WebhookDeliveryListRef,
    nullable: true,
    description: `An endpoint's deliveries with their attempts, newest first. \`status\`: one of ${STATES}. \`limit\`: 1 to ${PAGE_SIZE.max}, default ${PAGE_SIZE.default}.`,
    args: {
      endpointId: t.arg.id({ required: true, description: idOf('endpoint (`wep_…`)') }),
      status: t.arg.string({ description: `Only deliveries in this state: one of ${STATES}.` }),
      limit: t.arg.int({ description: ARGUMENTS.limit }),
      cursor: t.arg.string({ description: ARGUMENTS.cursor }),
    },
    resolve: (_root, args, ctx) =>
      listDeliveries(ctx.em(), ctx.sql, ctx.cursors, ownerOf(ctx), { ...args, endpointId: String(args.endpointId) }),
  }),
);

const RedeliveryInput = builder.inputType('ResendDeadWebhookDeliveriesInput', {
  description: 'Which dead deliveries to send again; without either bound, all of them.',
  fields: (t) => ({
    from: t.field({ type: 'DateTime', description: 'Only deliveries that went dead at or after this instant.' }),
    to: t.field({ type: 'DateTime', description: 'Only deliveries that went dead before this instant.' }),
  }),
});

builder.mutationFields((t) => ({
  resendWebhookDelivery: t.field({
    authScopes: MANAGE,
    type: WebhookDeliveryRef,
    description:
      'Sends the event to the endpoint again: a new series of attempts, with the same event id. CONFLICT while an attempt is under way.',
    args: {
      endpointId: t.arg.id({ required: true, description: idOf('endpoint') }),
      eventId: t.arg.id({ required: true, description: idOf('event to send again') }),
    },
    resolve: (_root, args, ctx) => resendDelivery(ctx.em(), ctx.sql, ownerOf(ctx), String(args.endpointId), String(args.eventId)),
  }),
  resendDeadWebhookDeliveries: t.field({
    authScopes: MANAGE,
    type: WebhookRedeliveryRef,
    description: `Sends the endpoint's dead deliveries again (within the window, when given), ${RESEND_BATCH} at most, the oldest events first; answers at once with how many were queued and how many remain.`,
    args: {
      endpointId: t.arg.id({ required: true, description: idOf('endpoint') }),
      input: t.arg({ type: RedeliveryInput, description: 'Which dead deliveries; none: all of them.' }),
    },
    resolve: (_root, args, ctx) => resendDeadDeliveries(ctx.em(), ctx.sql, ownerOf(ctx), String(args.endpointId), args.input ?? {}),
  }),
}));
