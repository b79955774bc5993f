// Importing each type file registers it on the builder.
import { builder } from './builder.ts';
import './types/date-time.ts';
import './types/user.ts';
import './types/order.ts';
import './types/user-list.ts';
import './types/order-list.ts';
import './types/rate-limit.ts';
import './types/json.ts';
import './types/event.ts';
import './types/webhook-endpoint.ts';
import './types/webhook-delivery.ts';

export const schema = builder.toSchema({ sortSchema: false });
