import type { UserRecord } from '../../db/records.ts';
import { createUser, deleteUser, findUser, listUsers, replaceUser, updateUser } from '../../services/users.ts';
import { EMAIL_MAX_LENGTH, NAME_MAX_LENGTH, PAGE_SIZE } from '../../services/limits.ts';
import { assertObjectType, type GraphQLResolveInfo } from 'graphql';
import { actsForEveryone, requireScope } from '../acts-for.ts';
import { ARGUMENTS, idOf } from '../arguments.ts';
import { builder } from '../builder.ts';
import { connectionOf } from '../connection.ts';
import type { GraphQLContext } from '../context.ts';
import { argumentsBelow, selectsBelow } from '../lookahead.ts';

export const UserRef = builder.node(builder.objectRef<UserRecord>('User'), {
  description: 'Someone who places orders.',
  id: { resolve: (user) => user.id, description: 'Opaque, prefixed `usr_`; sorts in creation order.' },
  // `node`/`nodes` read users with the same scope as `user`, through the request's batch loader.
  loadMany: (ids, ctx) => {
    requireScope(ctx, 'users:read', 'User');
    return ids.map((id) => ctx.loaders.userById.load(id));
  },
  fields: (t) => ({
    name: t.exposeString('name', { description: '1 to 200 characters.' }),
    email: t.exposeString('email', { description: 'Unique, compared case-insensitively.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the user was created.' }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      description: 'When a value of the user last changed (an update that changes nothing keeps it).',
    }),
  }),
});

const UserConnection = builder.connectionObject(
  { type: UserRef, name: 'UserConnection', description: 'A page of users in creation order (a Relay connection).' },
  { description: 'A user on the page, with its cursor.' },
);

/**
 * The page size of `edges { node { orders(limit) } }` when the page's users' orders may be fetched
 * with the users, in one statement: every user's orders are visible to the request (an admin key;
 * others see at most their own), and every selection asks the same valid size. Otherwise the
 * orders come per page from the batch loader, in a second statement.
 */
function ordersToPrefetch(ctx: GraphQLContext, info: GraphQLResolveInfo): number | undefined {
  if (!actsForEveryone(ctx)) return undefined;
  const orders = assertObjectType(info.schema.getType('User')).getFields().orders!;
  const limits = new Set(argumentsBelow(info, ['edges', 'node'], orders).map((args) => args.limit ?? PAGE_SIZE.default));
  const [limit] = limits;
  return limits.size === 1 && typeof limit === 'number' && Number.isInteger(limit) && limit >= 1 && limit <= PAGE_SIZE.max
    ? limit
    : undefined;
}

builder.queryFields((t) => ({
  user: t.field({
    authScopes: { scope: 'users:read' },
    type: UserRef,
    nullable: true,
    description: 'The user with this id, or null if there is none.',
    args: { id: t.arg.id({ required: true, description: idOf('user (`usr_…`)') }) },
    resolve: (_root, args, ctx) => findUser(ctx.sql, String(args.id)),
  }),
  users: t.field({
    authScopes: { scope: 'users:read' },
    type: UserConnection,
    description: [
      'Users in creation order, a Relay connection.',
      `Forwards: \`first\` (1 to ${PAGE_SIZE.max}, default ${PAGE_SIZE.default}) after the cursor \`after\` (an \`endCursor\`).`,
      `Backwards: \`last\` (1 to ${PAGE_SIZE.max}) before the cursor \`before\` (a \`startCursor\`); not with \`first\`.`,
      '`hasPreviousPage` and `hasNextPage` are true exactly when users lie before or after the page.',
    ].join(' '),
    args: {
      first: t.arg.int({ description: ARGUMENTS.first }),
      after: t.arg.string({ description: ARGUMENTS.after }),
      last: t.arg.int({ description: ARGUMENTS.last }),
      before: t.arg.string({ description: ARGUMENTS.before }),
    },
    resolve: async (_root, args, ctx, info) => {
      const ordersLimit = ordersToPrefetch(ctx, info);
      const flags = {
        hasPreviousPage: selectsBelow(info, ['pageInfo', 'hasPreviousPage']),
        hasNextPage: selectsBelow(info, ['pageInfo', 'hasNextPage']),
      };
      const page = await listUsers(ctx.sql, ctx.cursors, args, { ordersLimit, flags });
      if (page.latestOrders) ctx.loaders.prefetch(ordersLimit!, page.latestOrders);
      return connectionOf(page);
    },
  }),
}));

const NAME = `1 to ${NAME_MAX_LENGTH} characters once trimmed.`;
const EMAIL = `An address like ada@example.com, at most ${EMAIL_MAX_LENGTH} characters; unique, compared case-insensitively.`;

const CreateUserInput = builder.inputType('CreateUserInput', {
  description: 'A new user.',
  fields: (t) => ({ name: t.string({ required: true, description: NAME }), email: t.string({ required: true, description: EMAIL }) }),
});
const ReplaceUserInput = builder.inputType('ReplaceUserInput', {
  description: 'Every writable field; the stored user is replaced by these values.',
  fields: (t) => ({ name: t.string({ required: true, description: NAME }), email: t.string({ required: true, description: EMAIL }) }),
});
const UpdateUserInput = builder.inputType('UpdateUserInput', {
  description: 'Only the fields given change; null is not allowed for any of them.',
  fields: (t) => ({ name: t.string({ description: NAME }), email: t.string({ description: EMAIL }) }),
});

builder.mutationFields((t) => ({
  createUser: t.field({
    authScopes: { scope: 'users:write' },
    type: UserRef,
    description: 'Creates a user; CONFLICT if the email is taken.',
    args: { input: t.arg({ type: CreateUserInput, required: true, description: 'The user.' }) },
    resolve: (_root, args, ctx) => createUser(ctx.statements(), args.input),
  }),
  replaceUser: t.field({
    authScopes: (_root, args) => ({ $all: { scope: 'users:write', actsFor: String(args.id) } }),
    type: UserRef,
    description: 'Replaces every writable field of the user; NOT_FOUND if there is none, CONFLICT if the email is taken.',
    args: {
      id: t.arg.id({ required: true, description: idOf('user') }),
      input: t.arg({ type: ReplaceUserInput, required: true, description: 'Its new values.' }),
    },
    resolve: (_root, args, ctx) => replaceUser(ctx.em(), String(args.id), args.input),
  }),
  updateUser: t.field({
    authScopes: (_root, args) => ({ $all: { scope: 'users:write', actsFor: String(args.id) } }),
    type: UserRef,
    description: 'Changes the fields given; NOT_FOUND if there is no such user, CONFLICT if the email is taken.',
    args: {
      id: t.arg.id({ required: true, description: idOf('user') }),
      input: t.arg({ type: UpdateUserInput, required: true, description: 'The fields to change.' }),
    },
    resolve: (_root, args, ctx) => updateUser(ctx.em(), String(args.id), args.input),
  }),
  deleteUser: t.field({
    authScopes: (_root, args) => ({ $all: { scope: 'users:write', actsFor: String(args.id) } }),
    type: 'ID',
    description: "Deletes the user and all of their orders; returns the deleted user's id.",
    args: { id: t.arg.id({ required: true, description: idOf('user') }) },
    resolve: (_root, args, ctx) => deleteUser(ctx.em(), String(args.id)),
  }),
}));
