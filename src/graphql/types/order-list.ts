import { PAGE_SIZE } from '../../services/limits.ts';
import { pageOrdersOfUser, type OrderPage } from '../../services/orders.ts';
import { ARGUMENTS, idOf } from '../arguments.ts';
import { builder } from '../builder.ts';
import { OrderRef } from './order.ts';

const OrderListRef = builder.objectRef<OrderPage>('OrderList').implement({
  description: "A page of a user's orders, newest first.",
  fields: (t) => ({
    items: t.expose('items', { type: [OrderRef], description: 'The orders of the page, newest first.' }),
    nextCursor: t.exposeString('nextCursor', { nullable: true, description: 'Pass as `cursor` for the next page; null at the end.' }),
  }),
});

builder.queryField('orderList', (t) =>
  t.field({
    authScopes: (_root, args) => ({ $all: { scope: 'orders:read', actsFor: String(args.userId) } }),
    type: OrderListRef,
    nullable: true,
    description: `A user's orders, newest first, a page at a time. \`limit\`: 1 to ${PAGE_SIZE.max}, default ${PAGE_SIZE.default}. NOT_FOUND if the user does not exist.`,
    args: {
      userId: t.arg.id({ required: true, description: idOf('user whose orders to list') }),
      limit: t.arg.int({ description: ARGUMENTS.limit }),
      cursor: t.arg.string({ description: ARGUMENTS.cursor }),
    },
    resolve: (_root, args, ctx) => pageOrdersOfUser(ctx.sql, ctx.cursors, { ...args, userId: String(args.userId) }),
  }),
);
