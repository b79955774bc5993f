import { builder } from '../builder.ts';

interface RateLimitStatus {
  limit: number;
  remaining: number;
  resetAt: Date;
  cost: number;
  windowSeconds: number;
}

const RateLimitRef = builder.objectRef<RateLimitStatus>('RateLimit').implement({
  description: "The calling API key's rate limit budget, as it stands after this request (the RateLimit response fields say the same).",
  fields: (t) => ({
    limit: t.exposeInt('limit', { description: 'Operations (root fields) the key may run per window.' }),
    remaining: t.exposeInt('remaining', { description: 'Operations left in the current window.' }),
    resetAt: t.expose('resetAt', { type: 'DateTime', description: 'When the window closes and the whole budget is back.' }),
    cost: t.exposeInt('cost', { description: 'What this request cost: one per root field, this one included.' }),
    windowSeconds: t.exposeInt('windowSeconds', { description: 'Length of the window.' }),
  }),
});

// Any valid key may ask about its own budget, as it may introspect.
builder.queryField('rateLimit', (t) =>
  t.field({
    type: RateLimitRef,
    nullable: true,
    description: "The calling API key's rate limit budget; null while the limiter's store is unreachable (requests are then not counted).",
    resolve: (_root, _args, ctx) => {
      const ticket = ctx.rateLimit;
      if (!ticket?.state || ticket.decidedAt === undefined) return null;
      return {
        limit: ticket.state.limit,
        remaining: ticket.state.remaining,
        resetAt: new Date(ticket.decidedAt + ticket.state.resetMs),
        cost: ticket.cost,
        windowSeconds: Math.ceil(ticket.windowMs / 1000),
      };
    },
  }),
);
