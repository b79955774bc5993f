import { defineEntity, p } from '@mikro-orm/core';
import { idProperty } from './id-property.ts';
import { Order } from './order.ts';

export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: idProperty('user'),
    // Sorted as people read names, on every server (the users_name_collation migration).
    name: p.string().columnType('text').collation('und-x-icu'),
    email: p.string().columnType('text'),
    createdAt: p.datetime(3).onCreate(() => new Date()),
    // Created and updated at the same instant, not two clock reads apart.
    updatedAt: p
      .datetime(3)
      .onCreate((user: { createdAt?: Date }) => user.createdAt ?? new Date())
      .onUpdate(() => new Date()),
    orders: () => p.oneToMany(Order).mappedBy('user'),
  },
  indexes: [
    { name: 'users_created_at_id_idx', properties: ['createdAt', 'id'] },
    { name: 'users_name_id_idx', properties: ['name', 'id'] },
  ],
  checks: [{ name: 'users_name_length_check', expression: 'char_length(name) >= 1 and char_length(name) <= 200' }],
  // Letter case folded in full by ICU (upper, then lower: ß is ss), whatever the database's locale,
  // and put in NFC (the users_email_case_folding and users_email_fold_normalized migrations).
  uniques: [
    {
      name: 'users_email_lower_key',
      expression:
        'create unique index "users_email_lower_key" on "users" (normalize(lower(upper(lower("email" collate "und-x-icu"))), NFC))',
    },
  ],
});

export class User extends UserSchema.class {}
UserSchema.setClass(User);
