import { builder } from '../builder.ts';

builder.scalarType('JSON', {
  description: 'Any JSON value, as it is.',
  serialize: (value) => value,
  parseValue: (value) => value,
});
