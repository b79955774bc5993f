import { GraphQLError, Kind } from 'graphql';
import { isoOf } from '../../db/records.ts';
import { builder } from '../builder.ts';
import { instantOf } from '../../instant.ts';
import { INVALID_LITERAL } from '../literal-errors.ts';

/** Where the format DateTime takes and gives is specified. */
const DATE_TIME_SPECIFICATION = 'https://www.rfc-editor.org/rfc/rfc3339#section-5.6';

const INSTANT = 'must be an ISO 8601 instant with a time zone, like 2026-11-22T09:30:00Z';

builder.scalarType('DateTime', {
  description: 'An instant as an ISO 8601 string in UTC with millisecond precision, e.g. 2026-11-22T09:30:00.000Z.',
  // Read as RFC 3339's date-time (a zone required), written as one in UTC: tools that map a scalar
  // to a type of their language by the specification it names read it as a date.
  specifiedByURL: DATE_TIME_SPECIFICATION,
  // Reads carry epoch milliseconds, the unit of work Dates.
  serialize: (value) => isoOf(value),
  // A variable's error names the variable (graphql-js puts it first).
  parseValue: (value) => {
    const date = typeof value === 'string' ? instantOf(value) : undefined;
    if (!date) throw new GraphQLError(`DateTime ${INSTANT}.`);
    return date;
  },
  // A value written in the document: the error points at it, and validation names its field.
  parseLiteral: (node) => {
    const date = node.kind === Kind.STRING ? instantOf(node.value) : undefined;
    if (!date) throw new GraphQLError(`${INSTANT}.`, { nodes: node, extensions: { [INVALID_LITERAL]: true } });
    return date;
  },
});
