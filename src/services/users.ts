// Users: the domain rules for reading and changing them.
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { User } from '../db/entities/index.ts';
import type { EntityManager } from '../db/orm.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { CursorCodec } from '../pagination/cursor.ts';
import { cursorOf, pageOf, seekAfter, type Keyset } from '../pagination/keyset.ts';
import { PAGE_SIZE } from './limits.ts';
import { InputCheck, requireId } from './validation.ts';

export interface Page<T> {
  items: { node: T; cursor: string }[];
  hasNextPage: boolean;
}

export interface UserFields {
  name: string;
  email: string;
}

/** The connection's order: creation time, then id. */
const BY_CREATION: Keyset<User> = {
  scope: 'users/created',
  column: 'u.created_at',
  idColumn: 'u.id',
  direction: 'asc',
  keyType: 'time',
  key: (user) => user.createdAt,
  id: (user) => user.id,
};

/** Users in creation order, a page at a time, with a keyset on the unique tuple (created_at, id). */
export async function listUsers(
  em: EntityManager,
  cursors: CursorCodec,
  args: { first?: number | null; after?: string | null },
): Promise<Page<User>> {
  const check = new InputCheck();
  const first = check.pageSize('first', args.first, PAGE_SIZE);
  check.done();

  const qb = em
    .createQueryBuilder(User, 'u')
    .select('*')
    .orderBy({ createdAt: 'asc', id: 'asc' })
    .limit(first! + 1);
  if (args.after != null) seekAfter(qb, BY_CREATION, cursors, args.after, 'after');
  const { items, hasMore } = pageOf(await qb.getResultList(), first!);
  return { items: items.map((user) => ({ node: user, cursor: cursorOf(BY_CREATION, cursors, user) })), hasNextPage: hasMore };
}

export async function findUser(em: EntityManager, id: string): Promise<User | null> {
  return em.findOne(User, { id: requireId('user', 'id', id) });
}

export async function findUsersByIds(em: EntityManager, ids: readonly string[]): Promise<User[]> {
  return em.find(User, { id: { $in: [...ids] } });
}

async function mustFind(em: EntityManager, id: string): Promise<User> {
  const user = await em.findOne(User, { id });
  if (!user) throw new NotFoundError(`No user has the id ${id}.`);
  return user;
}

async function flushUnique(em: EntityManager, email: string): Promise<void> {
  try {
    await em.flush();
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) {
      throw new ConflictError(`A user with the email ${email} already exists (emails are compared case-insensitively).`);
    }
    throw error;
  }
}

export async function createUser(em: EntityManager, input: UserFields): Promise<User> {
  const check = new InputCheck();
  const name = check.name('name', input.name);
  const email = check.email('email', input.email);
  check.done();
  const user = em.create(User, { name: name!, email: email! });
  await flushUnique(em, email!);
  return user;
}

/** PUT semantics: every writable field is given and replaces the stored one. */
export async function replaceUser(em: EntityManager, id: string, input: UserFields): Promise<User> {
  const check = new InputCheck();
  check.id('user', 'id', id);
  const name = check.name('name', input.name);
  const email = check.email('email', input.email);
  check.done();
  const user = await mustFind(em, id);
  em.assign(user, { name: name!, email: email! });
  await flushUnique(em, email!);
  return user;
}

/** PATCH semantics: absent fields keep their value; null is refused because no field is nullable. */
export async function updateUser(em: EntityManager, id: string, input: { name?: string | null; email?: string | null }): Promise<User> {
  const check = new InputCheck();
  check.id('user', 'id', id);
  const changes: Partial<UserFields> = {};
  if (input.name !== undefined) changes.name = check.name('name', input.name);
  if (input.email !== undefined) changes.email = check.email('email', input.email);
  check.done();
  const user = await mustFind(em, id);
  em.assign(user, changes);
  await flushUnique(em, changes.email ?? user.email);
  return user;
}

/** Deletes the user; their orders go with them (foreign key ON DELETE CASCADE). */
export async function deleteUser(em: EntityManager, id: string): Promise<string> {
  const deleted = await em.nativeDelete(User, { id: requireId('user', 'id', id) });
  if (deleted === 0) throw new NotFoundError(`No user has the id ${id}.`);
  return id;
}
