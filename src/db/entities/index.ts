export { User } from './user.ts';
export { Order, ORDER_STATUSES, type OrderStatus } from './order.ts';
export { ApiKey, API_KEY_ENVIRONMENTS } from './api-key.ts';
export { ApiKeyUsage } from './api-key-usage.ts';
export { IdempotencyKey } from './idempotency-key.ts';
export { Event } from './event.ts';
export { WebhookEndpoint } from './webhook-endpoint.ts';
export { WebhookDelivery, DELIVERY_STATES, type DeliveryState } from './webhook-delivery.ts';
export { WebhookAttempt } from './webhook-attempt.ts';
