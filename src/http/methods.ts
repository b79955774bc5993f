// Which HTTP methods only read (RFC 9110 §9.2.1): they never carry a write, so never an Idempotency-Key.
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

export function isSafeMethod(method: string): boolean {
  return SAFE_METHODS.has(method);
}
