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
