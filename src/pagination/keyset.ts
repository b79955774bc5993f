// Keyset paging over a unique tuple (sort key, id): a page asks for the rows after the last one seen,
// compared as a tuple in the sort's direction, and fetches one row more than it returns to learn
// whether another page follows. Cursors carry the last row's position, sealed by the cursor codec.
import { ValidationError } from '../errors.ts';
import type { CursorCodec } from './cursor.ts';

export interface Keyset<T> {
  /** Binds cursors to one list and order; a cursor minted for another scope is refused. */
  scope: string;
  /** SQL of the sort key and of the id, as the query names them (e.g. `u.created_at`, `u.id`). */
  column: string;
  idColumn: string;
  direction: 'asc' | 'desc';
  /** Times travel as epoch milliseconds, texts as they are. */
  keyType: 'time' | 'text';
  key(row: T): Date | string;
  id(row: T): string;
}

/** Something a WHERE clause can be added to, like MikroORM's query builder. */
interface Filterable {
  andWhere(sql: string, params: unknown[]): unknown;
}

/** Restricts `query` to the rows after the cursor's position; `field` names the argument in errors. */
export function seekAfter<T>(query: Filterable, keyset: Keyset<T>, cursors: CursorCodec, cursor: string, field: string): void {
  const [key, id] = cursors.decode(keyset.scope, cursor, field);
  const expected = keyset.keyType === 'time' ? 'number' : 'string';
  if (typeof key !== expected || typeof id !== 'string') throw ValidationError.field(field, 'is not a valid cursor for this list');
  const value = keyset.keyType === 'time' ? new Date(key as number) : key;
  query.andWhere(`(${keyset.column}, ${keyset.idColumn}) ${keyset.direction === 'asc' ? '>' : '<'} (?, ?)`, [value, id]);
}

export function cursorOf<T>(keyset: Keyset<T>, cursors: CursorCodec, row: T): string {
  const key = keyset.key(row);
  return cursors.encode(keyset.scope, [key instanceof Date ? key.getTime() : key, keyset.id(row)]);
}

/** Splits the `limit + 1` rows a query returned into the page and whether more follow. */
export function pageOf<T>(rows: T[], limit: number): { items: T[]; hasMore: boolean } {
  return { items: rows.slice(0, limit), hasMore: rows.length > limit };
}
