// Keyset paging over a unique tuple (sort key, id): a page asks for the rows after the last one seen,
// compared as a tuple in the sort's direction, and fetches one row more than it returns to learn
// whether another page follows. Cursors carry the last row's position, signed by the cursor codec.
import { epochMs, type Instant } from '../db/records.ts';
import { ValidationError } from '../errors.ts';
import type { CursorCodec } from './cursor.ts';

export interface Keyset<T> {
  /** Binds cursors to one list and order; a cursor minted for another scope is refused. */
  scope: string;
  /** Times travel as epoch milliseconds, texts and whole numbers as they are. */
  keyType: 'time' | 'text' | 'integer';
  key(row: T): Instant | string;
  id(row: T): string;
}

/** The position after which a page starts, as bind values (sort key, id); `field` names the argument in errors. */
export function positionAfter<T>(keyset: Keyset<T>, cursors: CursorCodec, cursor: string, field: string): [Date | string | number, string] {
  const [key, id] = cursors.decode(keyset.scope, cursor, field);
  if (typeof id === 'string') {
    if (keyset.keyType === 'time' && typeof key === 'number') return [new Date(key), id];
    if (keyset.keyType === 'integer' && typeof key === 'number') return [key, id];
    if (keyset.keyType === 'text' && typeof key === 'string') return [key, id];
  }
  throw ValidationError.field(field, 'is not a valid cursor for this list');
}

export function cursorOf<T>(keyset: Keyset<T>, cursors: CursorCodec, row: T): string {
  const key = keyset.key(row);
  return cursors.encode(keyset.scope, [typeof key === 'string' ? key : epochMs(key), keyset.id(row)]);
}

/** Splits the `limit + 1` rows a query returned into the page and whether more follow. */
export function pageOf<T>(rows: T[], limit: number): { items: T[]; hasMore: boolean } {
  return { items: rows.length > limit ? rows.slice(0, limit) : rows, hasMore: rows.length > limit };
}
