// graphql-js's refusals of a request's variables, listed as input errors like every other: its
// message names the variable and the path to the value within it (`Variable "$input" got invalid
// value "x" at "input.total"; Int cannot represent …`), but only in words, where a client maps
// `extensions.errors` onto its form. The field is named as the client's variables hold it: the
// variable, then the path within it (`input.total`, `ids[1]`).
import { GraphQLError } from 'graphql';
import { placeOf } from './error-place.ts';

/** A value of the variable refused (graphql-js's coerceVariableValues): its prefix, then `; ` and the reason. */
const INVALID_VALUE = /^Variable "\$(\w+)" got invalid value /;
/** The path within the variable, ending the prefix when the value refused is not the variable itself. */
const AT_PATH = / at "(\w+(?:\.\w+|\[\d+\])*)"$/;
/** Reasons that name a field of the object at the path: one required and missing, or one it does not have. */
const CHILD_FIELD = /^Field "(\w+)" (?:of required type ".+" was not provided\.|is not defined by type "\w+"\.)/;
/** The variable itself missing or null. */
const WHOLE_VARIABLE = /^Variable "\$(\w+)" ((?:of required type ".+" was not provided|of non-null type ".+" must not be null)\.)$/;

/** The field and reason of a refused variable, when `error` is such a refusal. */
function fieldErrorOf(error: GraphQLError): { field: string; message: string } | undefined {
  const whole = WHOLE_VARIABLE.exec(error.message);
  if (whole) return { field: whole[1]!, message: whole[2]! };
  const variable = INVALID_VALUE.exec(error.message)?.[1];
  const reason = error.originalError?.message;
  if (variable === undefined || reason === undefined || !error.message.endsWith(`; ${reason}`)) return undefined;
  const prefix = error.message.slice(0, -(reason.length + 2));
  const path = AT_PATH.exec(prefix)?.[1] ?? variable;
  const child = CHILD_FIELD.exec(reason)?.[1];
  return { field: child === undefined ? path : `${path}.${child}`, message: reason };
}

/** A refusal of a variable's value, with `extensions.errors` naming where in the variables it sits. */
export function namedVariableError(error: GraphQLError): GraphQLError {
  const named = fieldErrorOf(error);
  if (!named) return error;
  return new GraphQLError(error.message, { ...placeOf(error), extensions: { ...error.extensions, errors: [named] } });
}
