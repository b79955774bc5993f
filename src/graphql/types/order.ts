import { ORDER_STATUSES } from '../../db/entities/index.ts';
import type { OrderRecord } from '../../db/records.ts';
import { NotFoundError } from '../../errors.ts';
import { ORDERS_BY_USER_MAX, PAGE_SIZE } from '../../services/limits.ts';
import { createOrder, findOrder, findOrdersByIds, listOrdersOfUser } from '../../services/orders.ts';
import { InputCheck } from '../../services/validation.ts';
import { actingDenied, actsFor, actsForEveryone, requireScope } from '../acts-for.ts';
import { ARGUMENTS, idOf } from '../arguments.ts';
import { builder } from '../builder.ts';
import type { GraphQLContext } from '../context.ts';
import { UserRef } from './user.ts';

const STATUSES = ORDER_STATUSES.map((status) => `\`${status}\``).join(', ');

/**
 * Reading an order by its id needs its user's token (or an admin key). Without a token the read is
 * refused before any order is looked up, so the answer is the same whether the order exists or
 * not, and names no user.
 */
function requireOrderReader(ctx: GraphQLContext): void {
  if (!actsForEveryone(ctx) && ctx.auth.userId === undefined) throw actingDenied(ctx);
}

/** An order as this request may see it: its own user's, or any with an admin key; else unseen (null). */
function visibleOrder(ctx: GraphQLContext, order: OrderRecord | null): OrderRecord | null {
  return order && actsFor(ctx, order.userId) ? order : null;
}

export const OrderRef = builder.node(builder.objectRef<OrderRecord>('Order'), {
  description: 'An order placed by a user.',
  id: { resolve: (order) => order.id, description: 'Opaque, prefixed `ord_`; sorts in creation order.' },
  // `node`/`nodes` read orders under the same rules as `order`.
  loadMany: async (ids, ctx) => {
    requireScope(ctx, 'orders:read', 'Order');
    requireOrderReader(ctx);
    const orders = new Map((await findOrdersByIds(ctx.sql, ids)).map((order) => [order.id, order]));
    return ids.map((id) => visibleOrder(ctx, orders.get(id) ?? null));
  },
  fields: (t) => ({
    total: t.exposeInt('total', { description: 'Amount in minor currency units (e.g. cents), 0 or more.' }),
    status: t.exposeString('status', { description: `One of ${STATUSES}.` }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the order was placed.' }),
    userId: t.exposeID('userId', { description: 'Id of the user who placed the order.' }),
    user: t.field({
      authScopes: { scope: 'users:read' },
      type: UserRef,
      description: 'The user who placed the order.',
      resolve: async (order, _args, ctx) => {
        const user = await ctx.loaders.userById.load(order.userId);
        if (!user) throw new NotFoundError(`No user has the id ${order.userId}.`);
        return user;
      },
    }),
  }),
});

builder.objectField(UserRef, 'orders', (t) =>
  t.field({
    // The scope is one check per request (the plugin caches a fixed scope map); whom the request acts
    // for differs per user, so it is checked in the resolver rather than as a scope map per user.
    authScopes: { scope: 'orders:read' },
    type: [OrderRef],
    description: `The user's newest orders first. \`limit\`: 1 to ${PAGE_SIZE.max}, default ${PAGE_SIZE.default}.`,
    args: { limit: t.arg.int({ description: ARGUMENTS.limit }) },
    resolve: (user, args, ctx) => {
      if (!actsFor(ctx, user.id)) throw actingDenied(ctx, user.id);
      const check = new InputCheck();
      const limit = check.pageSize('limit', args.limit, PAGE_SIZE);
      check.done();
      return ctx.loaders.prefetched(limit!, user.id) ?? ctx.loaders.latestOrders(limit!).load(user.id);
    },
  }),
);

builder.queryField('order', (t) =>
  t.field({
    authScopes: { scope: 'orders:read' },
    type: OrderRef,
    nullable: true,
    description: "The order with this id, or null if there is none (or it is another user's).",
    args: { id: t.arg.id({ required: true, description: idOf('order (`ord_…`)') }) },
    resolve: async (_root, args, ctx) => {
      requireOrderReader(ctx);
      return visibleOrder(ctx, await findOrder(ctx.sql, String(args.id)));
    },
  }),
);

builder.queryField('orders', (t) =>
  t.field({
    authScopes: (_root, args) => ({ $all: { scope: 'orders:read', actsFor: String(args.userId) } }),
    type: [OrderRef],
    description: `The newest ${ORDERS_BY_USER_MAX} orders of a user, newest first. NOT_FOUND if the user does not exist.`,
    args: { userId: t.arg.id({ required: true, description: idOf('user whose orders to list') }) },
    resolve: (_root, args, ctx) => listOrdersOfUser(ctx.sql, String(args.userId)),
  }),
);

const CreateOrderInput = builder.inputType('CreateOrderInput', {
  description: 'A new order.',
  fields: (t) => ({
    userId: t.id({ required: true, description: 'The id of the user placing it (`usr_…`).' }),
    total: t.int({ required: true, description: 'Minor currency units, 0 or more.' }),
    status: t.string({ description: `One of ${STATUSES}; default \`pending\`.` }),
  }),
});

builder.mutationField('createOrder', (t) =>
  t.field({
    authScopes: (_root, args) => ({ $all: { scope: 'orders:write', actsFor: String(args.input.userId) } }),
    type: OrderRef,
    description: 'Places an order for the user; NOT_FOUND if the user does not exist.',
    args: { input: t.arg({ type: CreateOrderInput, required: true, description: 'The order.' }) },
    resolve: (_root, args, ctx) =>
      createOrder(ctx.statements(), { ...args.input, userId: String(args.input.userId) }, { amongOtherWrites: ctx.severalMutations }),
  }),
);
