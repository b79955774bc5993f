import fs from 'node:fs/promises';
import {
  buildSchema,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
  printType,
  type GraphQLObjectType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { SCHEMA_FILE, printedSchema } from '../../src/graphql/print.ts';
import { schema } from '../../src/graphql/schema.ts';

describe('schema', () => {
  it('is checked in as printed from the code (run `npm run schema:print` to refresh it)', async () => {
    expect(await fs.readFile(SCHEMA_FILE, 'utf8')).toBe(printedSchema());
  });

  it('tells tools how to retry writes safely: the Mutation type documents Idempotency-Key and its error codes', () => {
    const description = schema.getMutationType()?.description ?? '';
    for (const words of ['Idempotency-Key', 'Idempotent-Replayed', 'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_KEY_IN_FLIGHT']) {
      expect(description).toContain(words);
    }
  });

  it('names the specification of DateTime (@specifiedBy), for the tools that map it to a date type', () => {
    expect(schema.getType('DateTime')).toMatchObject({ specifiedByURL: 'https://www.rfc-editor.org/rfc/rfc3339#section-5.6' });
    expect(printedSchema()).toContain('scalar DateTime @specifiedBy(url: "https://www.rfc-editor.org/rfc/rfc3339#section-5.6")');
  });

  it('describes every type, field and argument, for the tools that show them', () => {
    const undescribed: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith('__') || (isScalarType(type) && isSpecifiedScalarType(type))) continue;
      if (!type.description) undescribed.push(type.name);
      if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
        const fields: readonly {
          name: string;
          description?: string | null;
          args?: readonly { name: string; description?: string | null }[];
        }[] = Object.values(type.getFields());
        for (const field of fields) {
          if (!field.description) undescribed.push(`${type.name}.${field.name}`);
          for (const arg of field.args ?? []) if (!arg.description) undescribed.push(`${type.name}.${field.name}(${arg.name})`);
        }
      }
    }
    expect(undescribed).toEqual([]);
  });

  it('keeps the specified fields exactly, with their nullability', () => {
    const spec = buildSchema(`
      type User  { id: ID!  name: String!  email: String!  orders(limit: Int): [Order!]! }
      type Order { id: ID!  total: Int!  status: String! }
      type PageInfo { hasNextPage: Boolean! endCursor: String }
      type UserEdge { node: User! cursor: String! }
      type UserConnection { edges: [UserEdge!]! pageInfo: PageInfo! }
      type Query {
        user(id: ID!): User
        orders(userId: ID!): [Order!]!
        users(first: Int, after: String): UserConnection!
      }
      type Mutation { createOrder(input: CreateOrderInput!): Order! }
      input CreateOrderInput { userId: ID!  total: Int!  status: String }
    `);
    for (const type of Object.values(spec.getTypeMap())) {
      if (type.name.startsWith('__') || !('getFields' in type)) continue;
      const actual = schema.getType(type.name) as GraphQLObjectType | undefined;
      expect(actual, type.name).toBeDefined();
      for (const [name, field] of Object.entries((type as GraphQLObjectType).getFields())) {
        const actualField = actual!.getFields()[name];
        expect(actualField, `${type.name}.${name}`).toBeDefined();
        expect(String(actualField!.type), `${type.name}.${name}`).toBe(String(field.type));
        const args = (f: typeof field) => ('args' in f ? f.args.map((arg) => `${arg.name}: ${String(arg.type)}`) : []);
        // The specified arguments come first, as specified; any added since are optional, so every
        // query written against the specification still runs (e.g. `users(last, before)`).
        const specified = args(field);
        expect(args(actualField!).slice(0, specified.length), `${type.name}.${name} arguments`).toEqual(specified);
        for (const added of 'args' in actualField! ? actualField.args.slice(specified.length) : []) {
          expect(String(added.type), `${type.name}.${name}(${added.name}:) is optional`).not.toMatch(/!$/);
        }
      }
    }
    expect(printType(schema.getType('CreateOrderInput')!)).toContain('userId: ID!');
  });
});
