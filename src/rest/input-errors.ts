// GraphQL's coercion errors in the API's own words. graphql-js describes a variable that does not fit
// its type in GraphQL's prose ("Int cannot represent non 32-bit signed integer value: 3000000000");
// REST clients get what the service's own checks would say ("must be a whole number from 0 to
// 2147483647"), naming the field.
import { isEnumType, type GraphQLError, type GraphQLSchema } from 'graphql';
import type { FieldError } from '../errors.ts';
import { integerRange } from './openapi.ts';

const INT32 = { minimum: -(2 ** 31), maximum: 2 ** 31 - 1 };

/** What to say about a value of a scalar or enum type that did not fit; `where` is the input type and field it is in, if any. */
function mismatch(schema: GraphQLSchema, reason: string, where: { inputType?: string; name: string }): string {
  if (/^Int cannot represent/.test(reason)) {
    const { minimum, maximum } = { ...INT32, ...integerRange(where.inputType, where.name) };
    return `must be a whole number from ${minimum} to ${maximum}`;
  }
  if (/^(String|ID) cannot represent/.test(reason)) return 'must be a string';
  if (/^Boolean cannot represent/.test(reason)) return 'must be true or false';
  if (/^DateTime must be/.test(reason)) return 'must be an ISO 8601 instant with a time zone, like 2026-11-22T09:30:00Z';
  if (/^Expected non-nullable type/.test(reason)) return 'cannot be null';
  const enumType = /does not exist in "(\w+)" enum/.exec(reason)?.[1];
  const type = enumType ? schema.getType(enumType) : undefined;
  if (isEnumType(type))
    return `must be one of ${type
      .getValues()
      .map((value) => value.name)
      .join(', ')}`;
  if (/^Expected type "\w+" to be an object/.test(reason)) return 'must be a JSON object';
  if (/^Expected type "\[/.test(reason) || /to be a list/.test(reason)) return 'must be a list';
  return reason;
}

/**
 * Each coercion error of a route's variables as a field error: body fields by name (a list element's
 * error names the list), arguments by their argument name (the adapter gives them their REST names).
 */
export function fieldErrorsOfCoercion(schema: GraphQLSchema, errors: readonly GraphQLError[], inputType?: string): FieldError[] {
  return errors.flatMap((error): FieldError[] => {
    const { message } = error;
    const missing = /Field "(\w+)" of required type "[^"]+" was not provided/.exec(message);
    if (missing) return [{ field: missing[1]!, message: 'is required' }];
    const unknown = /Field "(\w+)" is not defined by type/.exec(message);
    if (unknown) return [{ field: unknown[1]!, message: 'is not a field that can be set' }];
    // `Variable "$input" got invalid value 5 at "input.name"; String cannot represent …`
    const inBody = /at "input\.(\w+)(?:\[\d+\])?[^"]*"; (.*)$/s.exec(message);
    if (inBody) return [{ field: inBody[1]!, message: mismatch(schema, inBody[2]!, { inputType, name: inBody[1]! }) }];
    if (/^Variable "\$input" got invalid value/.test(message) && /to be an object/.test(message)) {
      return [{ field: 'body', message: 'must be a JSON object' }];
    }
    // `Variable "$type" got invalid value "x"; Value "x" does not exist in "EventType" enum.`
    const argument = /^Variable "\$(\w+)" got invalid value [^;]*; (.*)$/s.exec(message);
    if (argument) return [{ field: argument[1]!, message: mismatch(schema, argument[2]!, { name: argument[1]! }) }];
    return [];
  });
}
