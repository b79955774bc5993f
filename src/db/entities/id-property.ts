import { p } from '@mikro-orm/core';
import { newId, type IdKind } from '../ids.ts';

/** The primary key of an entity: a TypeID minted on insert. Collation "C" compares ids byte-wise, the order they were minted in. */
export const idProperty = (kind: IdKind) =>
  p
    .string()
    .primary()
    .columnType('text')
    .collation('C')
    .onCreate(() => newId(kind));
