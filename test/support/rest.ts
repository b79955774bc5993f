// Speaking REST to a test server: JSON in, the status, headers and parsed body out.
export interface RestResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A user and an order as REST represents them. */
export interface User {
  id: string;
  name: string;
  email: string;
  createdAt: string;
  updatedAt: string;
}

export interface Order {
  id: string;
  total: number;
  status: string;
  createdAt: string;
  userId: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  errors?: { field: string; message: string }[];
}

export async function rest<T = unknown>(
  server: { fetch(path: string, init?: RequestInit): Promise<Response> },
  method: string,
  path: string,
  options: { json?: unknown; body?: string; contentType?: string; headers?: Record<string, string> } = {},
): Promise<RestResponse<T>> {
  const headers: Record<string, string> = { accept: 'application/json, application/problem+json', ...options.headers };
  let body = options.body;
  if (options.json !== undefined) body = JSON.stringify(options.json);
  if (body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
  const response = await server.fetch(path, { method, headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Asserts the RFC 9457 shape and returns the problem. */
export function expectProblem(response: RestResponse, status: number, kind: string, path: string): Problem {
  const problem = response.body as Problem;
  if (response.status !== status) throw new Error(`expected ${status}, got ${response.status}: ${response.text}`);
  if (response.headers.get('content-type') !== 'application/problem+json')
    throw new Error(`not problem+json: ${response.headers.get('content-type')}`);
  const expected = { type: `https://portico.dev/problems/${kind}`, status, instance: path };
  for (const [key, value] of Object.entries(expected)) {
    if ((problem as unknown as Record<string, unknown>)[key] !== value)
      throw new Error(`problem.${key}: expected ${String(value)}, got ${response.text}`);
  }
  if (!problem.title || !problem.detail) throw new Error(`problem without title or detail: ${response.text}`);
  return problem;
}
