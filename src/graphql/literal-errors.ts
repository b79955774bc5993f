// A scalar's refusal of a value written in the document. graphql-js reports the scalar's own error
// as it is, so the scalar gives it the value's location, and its own refusals of built-in scalars'
// and enums' literals likewise; which input field or argument held the value, neither says, and
// validation names it from the document (namedLiteralError), as every other input error names its field.
import { BREAK, GraphQLError, Kind, visit, type ASTNode, type DocumentNode } from 'graphql';
import { placeOf } from './error-place.ts';

/** The extension a scalar marks such an error with; it does not reach the client. */
export const INVALID_LITERAL = 'invalidLiteral';

/** The nearest input field or argument that holds `target` in `document`. */
function holderOf(document: DocumentNode, target: ASTNode): string | undefined {
  let name: string | undefined;
  visit(document, {
    enter(node, _key, parent, _path, ancestors) {
      if (node !== target) return undefined;
      // graphql-js leaves the parent out of the ancestors.
      const above = [...ancestors, ...(parent ? [parent] : [])];
      for (let i = above.length - 1; i >= 0 && name === undefined; i--) {
        const ancestor = above[i]!;
        if ('kind' in ancestor && (ancestor.kind === Kind.OBJECT_FIELD || ancestor.kind === Kind.ARGUMENT)) name = ancestor.name.value;
      }
      return BREAK;
    },
  });
  return name;
}

/**
 * graphql-js's own refusals of a literal of a built-in scalar or an enum (its ValuesOfCorrectType
 * rule: `Int cannot represent non-integer value: "x"`, `Value "x" does not exist in "EventType"
 * enum.`, `Expected value of type "String!", found null.`), which name no field either.
 */
const BUILT_IN_REFUSAL =
  /^(?:\w+ cannot represent |Enum "\w+" cannot represent |Value ".*" does not exist in "\w+" enum|Expected value of type ".+", found )/;

/** The same rule's refusal of an input object missing a field it requires, which names that field in its text. */
const MISSING_FIELD = /^Field "\w+\.(\w+)" of required type ".+" was not provided\.$/;

/** A scalar's refusal of a literal, worded and listed as an input error of the field that held it. */
export function namedLiteralError(error: GraphQLError, document: DocumentNode): GraphQLError {
  const missing = MISSING_FIELD.exec(error.message)?.[1];
  if (error.extensions?.[INVALID_LITERAL] !== true && !BUILT_IN_REFUSAL.test(error.message) && missing === undefined) return error;
  const { [INVALID_LITERAL]: _marker, ...extensions } = error.extensions ?? {};
  const field = missing ?? (error.nodes?.[0] && holderOf(document, error.nodes[0]));
  return new GraphQLError(field ? `${field}: ${error.message}` : error.message, {
    ...placeOf(error),
    extensions: { ...extensions, ...(field ? { errors: [{ field, message: error.message }] } : {}) },
  });
}
