import { GraphQLError } from 'graphql';
import { isoOf } from '../../db/records.ts';
import { builder } from '../builder.ts';
import { instantOf } from '../../instant.ts';

builder.scalarType('DateTime', {
  description: 'An instant as an ISO 8601 string in UTC with millisecond precision, e.g. 2026-11-22T09:30:00.000Z.',
  // Reads carry epoch milliseconds, the unit of work Dates.
  serialize: (value) => isoOf(value),
  parseValue: (value) => {
    const date = typeof value === 'string' ? instantOf(value) : undefined;
    if (!date) throw new GraphQLError('DateTime must be an ISO 8601 instant with a time zone, like 2026-11-22T09:30:00Z.');
    return date;
  },
});
