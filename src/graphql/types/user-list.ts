// The users collection as the REST facade pages it: numbered pages, keyset after an id, or cursors
// over a sort. GraphQL clients may use it too; the Relay connection `users` is the idiomatic one.
import { PAGE_SIZE, PAGE_NUMBER_MAX } from '../../services/limits.ts';
import { USER_SORTS, listUserCollection, type UserList, type UserListPagination } from '../../services/user-list.ts';
import { ARGUMENTS } from '../arguments.ts';
import { builder } from '../builder.ts';
import { UserRef } from './user.ts';

type Offset = Extract<UserListPagination, { style: 'offset' }>;
type Cursor = Extract<UserListPagination, { style: 'cursor' }>;

const OffsetPagination = builder.objectRef<Offset>('OffsetPagination').implement({
  description: 'Where a numbered page sits in the whole list.',
  fields: (t) => ({
    page: t.exposeInt('page', { description: 'This page, from 1.' }),
    limit: t.exposeInt('limit', { description: 'Users per page.' }),
    total: t.exposeInt('total', { description: 'Users in the whole list.' }),
    totalPages: t.exposeInt('totalPages', { description: 'Pages in the whole list at this size.' }),
  }),
});

const CursorPagination = builder.objectRef<Cursor>('CursorPagination').implement({
  description: 'How to get the next page of a cursor or keyset listing.',
  fields: (t) => ({
    nextCursor: t.exposeString('nextCursor', {
      nullable: true,
      description: 'What to pass for the next page: the next cursor, or after an id-keyed page the next id; null at the end.',
    }),
    hasMore: t.exposeBoolean('hasMore', { description: 'Whether users follow this page.' }),
  }),
});

const Pagination = builder.unionType('UserListPagination', {
  description: 'Numbered pages with totals (`OffsetPagination`), or the way to the next page (`CursorPagination`).',
  types: [OffsetPagination, CursorPagination],
  resolveType: (pagination) => (pagination.style === 'offset' ? OffsetPagination : CursorPagination),
});

const UserListRef = builder.objectRef<UserList>('UserList').implement({
  description: 'A page of users, in the paging style the arguments chose.',
  fields: (t) => ({
    data: t.expose('data', { type: [UserRef], description: 'The users of the page.' }),
    pagination: t.expose('pagination', { type: Pagination, description: 'Where the page sits, and how to get the next.' }),
  }),
});

builder.queryField('userList', (t) =>
  t.field({
    authScopes: { scope: 'users:read' },
    type: UserListRef,
    nullable: true,
    description: [
      'Users, a page at a time, in one of three styles chosen by the arguments given (one style per request):',
      `\`page\` (1 to ${PAGE_NUMBER_MAX}): numbered pages with totals; \`afterId\`: the users after that id, by id;`,
      '`cursor` or nothing: opaque cursors over `sort`.',
      `\`limit\`: 1 to ${PAGE_SIZE.max}, default ${PAGE_SIZE.default}. \`sort\`: ${USER_SORTS.join(', ')} (default createdAt; the id breaks ties).`,
    ].join(' '),
    args: {
      page: t.arg.int({ description: `Numbered paging: the page, 1 to ${PAGE_NUMBER_MAX}.` }),
      limit: t.arg.int({ description: ARGUMENTS.limit }),
      afterId: t.arg.id({ description: 'Keyset paging: the users after this id, by id.' }),
      cursor: t.arg.string({ description: `Cursor paging: ${ARGUMENTS.cursor}` }),
      sort: t.arg.string({ description: `One of ${USER_SORTS.join(', ')} (default createdAt); not with \`afterId\`.` }),
    },
    resolve: (_root, args, ctx) =>
      listUserCollection(ctx.sql, ctx.cursors, { ...args, afterId: args.afterId == null ? args.afterId : String(args.afterId) }),
  }),
);
