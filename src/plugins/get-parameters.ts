// A GraphQL GET carries its variables and extensions as JSON in query parameters. Yoga parses them
// with JSON.parse and lets a SyntaxError escape as an unexpected error (INTERNAL); a client that sent
// text that is not JSON is told so instead, naming the parameter, and so is one whose numbers JSON.parse
// would not read as written (http/json-numbers.ts).
import { inexactDetail, inexactFieldError, parseJson, type InexactNumber } from '../http/json-numbers.ts';
import { refuse } from '../refusals.ts';
import type { ServerPlugin } from './server-context.ts';

const JSON_PARAMETERS = ['variables', 'extensions'] as const;

export function useGetParameterChecks(): ServerPlugin {
  return {
    onRequestParse({ request, url, endResponse }) {
      if (request.method !== 'GET') return;
      for (const name of JSON_PARAMETERS) {
        const value = url.searchParams.get(name);
        if (value === null) continue;
        let inexact: InexactNumber | undefined;
        try {
          inexact = parseJson(value).inexact;
        } catch {
          endResponse(refuse(request, { kind: 'invalid-input', detail: `The ${name} query parameter must be a JSON object.` }));
          return;
        }
        if (inexact) {
          // One in the variables is named as a variable its type refuses is (graphql/variable-errors.ts).
          const named = name === 'variables' ? inexactFieldError(inexact) : undefined;
          const fieldErrors = named ? [named] : [];
          endResponse(
            refuse(request, { kind: 'invalid-input', detail: `The ${name} query parameter holds ${inexactDetail(inexact)}.`, fieldErrors }),
          );
          return;
        }
      }
    },
  };
}
