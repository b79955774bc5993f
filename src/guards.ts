// Type guards for values that come from outside: the environment, requests, the database.

/** Whether `value` is one of `values`, narrowing it to their type. */
export function isOneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}

/** What an error says, for a message to a person, whatever was thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The errno code of a failed system call, if the error carries one. */
export function errnoOf(error: unknown): string | undefined {
  const code = error instanceof Error && 'code' in error ? error.code : undefined;
  return typeof code === 'string' ? code : undefined;
}

type FieldType = 'string' | 'number';
type Shaped<S extends Record<string, FieldType>> = { [K in keyof S]: S[K] extends 'string' ? string : number };

/** `value` when it is an object whose named fields have the named types (parsed JSON, say); otherwise undefined. */
export function shaped<S extends Record<string, FieldType>>(value: unknown, shape: S): Shaped<S> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [name, type] of Object.entries(shape)) if (typeof Reflect.get(value, name) !== type) return undefined;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- every field of the shape was checked just above
  return value as Shaped<S>;
}
