export { User } from './user.ts';
export { Order, ORDER_STATUSES, type OrderStatus } from './order.ts';
