// Small fixes to installed dependencies, applied after every install (`postinstall`, and in the
// Dockerfile, which installs without scripts). Each names the exact text it replaces: when an
// upgrade changes that text, the install fails here, so the patch is reviewed (dropped if upstream
// fixed it) rather than silently lost. Running it again changes nothing.
//
// graphql-jit runs a mutation's root fields one after another through two functions it makes anew
// for every execution, inside the compiled operation, and stores on the execution's state. Whatever
// V8's reason, that keeps a request's objects alive through young-generation collections: on a
// bare schema, run in a loop, a mutation had 2.0% of what it allocated promoted to the old
// generation and a query 0.1%; with the two functions made once and shared, 0.1%. In Portico,
// `createOrder` promoted 7.9% of its allocation (2.9% with this patch), and the full collections
// that promotion brought on set its p99 (bench/FINDINGS.md, "The tail of `createOrder`"). Shared,
// the functions do exactly what graphql-jit's own do.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

interface Patch {
  /** Files under node_modules. */
  files: string[];
  from: string;
  to: string;
}

const MARK = 'patched by Portico (scripts/patch-dependencies.ts)';
// graphql-jit's ESM entry loads the CommonJS build of this file; the other is patched alike.
const JIT_EXECUTION = ['graphql-jit/dist/execution.js', 'graphql-jit/dist/execution.mjs'];

/** The two functions, made once, beside the function that makes an execution's state. */
const JIT_SERIAL_FUNCTIONS: Patch = {
  files: JIT_EXECUTION,
  from: 'function createBoundQuery(compilationContext, document, func, getVariableValues, operationName) {',
  to: `// ${MARK}: shared by every execution of a mutation.
function serialNoop() {}
function serialResolve(context) {
  if (context.jobCounter >= context.queue.length) {
    context.finalResolve(context);
    return;
  }
  context.queue[context.jobCounter++](context);
}
function createBoundQuery(compilationContext, document, func, getVariableValues, operationName) {`,
};

/** The execution's state carries them to the compiled operation, which sees nothing else of this module. */
const JIT_SERIAL_STATE: Patch = {
  files: JIT_EXECUTION,
  from: `        trimmer,
        promiseCounter: 0,
        data: {},`,
  to: `        trimmer,
        serialNoop, // ${MARK}
        serialResolve,
        promiseCounter: 0,
        data: {},`,
};

/** The compiled mutation uses them instead of making its own. */
const JIT_SERIAL_USE: Patch = {
  files: JIT_EXECUTION,
  from: `    \${GLOBAL_EXECUTION_CONTEXT}.finalResolve = () => {};
    \${GLOBAL_RESOLVE} = (context) => {
      if (context.jobCounter >= context.queue.length) {
        // All mutations have finished
        context.finalResolve(context);
        return;
      }
      context.queue[context.jobCounter++](context);
    };`,
  to: `    // ${MARK}
    \${GLOBAL_EXECUTION_CONTEXT}.finalResolve = \${GLOBAL_EXECUTION_CONTEXT}.serialNoop;
    \${GLOBAL_RESOLVE} = \${GLOBAL_EXECUTION_CONTEXT}.serialResolve;`,
};

/**
 * graphql-jit writes an input object's field given as a variable (`input: { name: $name }`) as null,
 * to be replaced by the variable's value when the request sends one. When it does not, the field
 * stayed null, where GraphQL's input coercion leaves it out (spec §5.6 "Input Coercion": `{ a: $var,
 * b: 123 }` with no `var` is `{ b: 123 }`): an update meant to change one field cleared the others.
 * The field is now left out until the variable sets it, and keeps its default when it has one.
 */
const JIT_ABSENT_VARIABLE_FIELDS: Patch = {
  files: ['graphql-jit/dist/ast.js', 'graphql-jit/dist/ast.mjs'],
  from: `      coercedObj[field.name] = fieldValue.value;`,
  to: `      // ${MARK}: a variable's field is set by the variable, at run time, when it is sent.
      if (fieldNode.value.kind !== "Variable") coercedObj[field.name] = fieldValue.value;`,
};

/**
 * graphql-jit collects a selection set's fields with a stack: the fields of a fragment (spread or
 * inline) came after the fields beside it, and of two fragments the second first, where graphql-js
 * collects them in document order (spec §6.3.2 CollectFields), which the response keeps (§7.2.2):
 * `{ ...F id }` with `F { name }` was answered `{"id", "name"}`. Relay and Apollo documents are
 * mostly fragments; a client comparing responses, or a snapshot test, saw every one reordered. A
 * fragment's fields are now collected when the fragment is met.
 */
const JIT_FIELD_ORDER: Patch[] = ['selection', 'fragment'].map((source) => ({
  files: ['graphql-jit/dist/ast.js', 'graphql-jit/dist/ast.mjs'],
  from: `          stack.push({
            selectionSet: ${source}.selectionSet,
            parentResponsePath: parentResponsePath2,
            previousShouldInclude: joinShouldIncludeCompilations(
              // \`should include\`s from previous fragments
              previousShouldInclude2,
              // current fragment's shouldInclude
              [compiledSkipInclude]
            )
          });`,
  to: `          // ${MARK}: collected at once, in document order.
          collectFieldsImpl(compilationContext, runtimeType, ${source}.selectionSet, fields, visitedFragmentNames, joinShouldIncludeCompilations(previousShouldInclude2, [compiledSkipInclude]), parentResponsePath2);`,
}));

/**
 * graphql-jit, compiling a document, walks each field's subtree once per path through its fragments:
 * a fragment spread twice in one selection, or spread again by a fragment spread beside it, was
 * walked again each time, where graphql-js collects a fragment once per selection (spec §6.3.2,
 * visitedFragments). Fragments spreading the next one twice doubled the walk at each step: a
 * kilobyte's document held the process's only thread for minutes, before any deadline could fire.
 * A fragment is now walked once per field and response path, as graphql-js does; walking it again
 * added nothing (its fields' include conditions are a set).
 */
const JIT_FRAGMENTS_ONCE: Patch[] = [
  {
    files: ['graphql-jit/dist/ast.js', 'graphql-jit/dist/ast.mjs'],
    from: `function augmentFieldNodeTree(compilationContext, rootFieldNode, parentResponsePath) {`,
    to: `function augmentFieldNodeTree(compilationContext, rootFieldNode, parentResponsePath) {
  // ${MARK}: the fragments walked, by parent field node, as response path and name.
  const walked = new Map();`,
  },
  {
    files: ['graphql-jit/dist/ast.js', 'graphql-jit/dist/ast.mjs'],
    from: `          const fragment = compilationContext.fragments[selection2.name.value];
          for (const subSelection of fragment.selectionSet.selections) {`,
    to: `          const fragment = compilationContext.fragments[selection2.name.value];
          // ${MARK}: once per field and path.
          const walkedHere = walked.get(parentFieldNode) ?? new Map();
          walked.set(parentFieldNode, walkedHere);
          const fragmentsHere = walkedHere.get(parentResponsePath2) ?? new Set();
          walkedHere.set(parentResponsePath2, fragmentsHere);
          if (fragmentsHere.has(selection2.name.value)) break;
          fragmentsHere.add(selection2.name.value);
          for (const subSelection of fragment.selectionSet.selections) {`,
  },
];

const modules = path.join(path.dirname(import.meta.dirname), 'node_modules');

for (const patch of [
  JIT_SERIAL_FUNCTIONS,
  JIT_SERIAL_STATE,
  JIT_SERIAL_USE,
  JIT_ABSENT_VARIABLE_FIELDS,
  ...JIT_FIELD_ORDER,
  ...JIT_FRAGMENTS_ONCE,
]) {
  for (const file of patch.files) {
    const at = path.join(modules, file);
    const text = readFileSync(at, 'utf8');
    if (text.includes(patch.to)) continue;
    if (!text.includes(patch.from)) {
      throw new Error(`${file} no longer holds the text scripts/patch-dependencies.ts replaces; review that patch for this version`);
    }
    writeFileSync(at, text.replace(patch.from, patch.to));
  }
}
