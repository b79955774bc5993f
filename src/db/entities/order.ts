import { defineEntity, p } from '@mikro-orm/core';
import { idProperty } from './id-property.ts';
import { User } from './user.ts';

export const ORDER_STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'cancelled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const OrderSchema = defineEntity({
  name: 'Order',
  // "order" is a reserved word in SQL.
  tableName: 'orders',
  properties: {
    id: idProperty('order'),
    user: () => p.manyToOne(User).deleteRule('cascade'),
    /** Minor currency units (cents), so sums never meet floating point. */
    total: p.integer(),
    status: p.enum(ORDER_STATUSES).default('pending'),
    createdAt: p.datetime(3).onCreate(() => new Date()),
  },
  indexes: [{ name: 'orders_user_id_created_at_id_idx', properties: ['user', 'createdAt', 'id'] }],
  checks: [{ name: 'orders_total_check', expression: 'total >= 0' }],
});

export class Order extends OrderSchema.class {}
OrderSchema.setClass(Order);
