// The arguments of a command-line tool, parsed the same way for every tool: `--help` (or `-h`) prints
// its usage and exits 0; a mistake prints what is wrong, naming the flag as typed, then the usage,
// and exits 2; a negative number after a flag is that flag's value.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { databaseFailureOf, type DatabaseFailure } from '../db/failures.ts';
import { DomainError, ValidationError } from '../errors.ts';
import { messageOf } from '../guards.ts';
import { exitWithStartupFailure, start, type Started } from '../startup.ts';

/** Prints `message` and the usage, and exits with status 2. */
export function usageError(usage: string, message: string): never {
  process.stderr.write(`${message}\n${usage}\n`);
  process.exit(2);
}

/** The parser's complaint in a few plain words, naming the flag as the user typed it. */
function plainly(error: unknown): string {
  const code: unknown = error !== null && typeof error === 'object' ? Reflect.get(error, 'code') : undefined;
  const flag = /'(-{1,2}[\w-]+)/.exec(messageOf(error))?.[1] ?? 'an option';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${flag}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    // A value that looks like a flag (`--name --scopes x`) is taken for one: the flag has no value.
    if (/ambiguous/.test(messageOf(error))) return `${flag} needs a value (one that starts with a dash goes as ${flag}=-…)`;
    return /argument missing|<value>/.test(messageOf(error)) ? `${flag} needs a value` : `${flag} takes no value`;
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return 'unexpected argument';
  return messageOf(error);
}

/** Whether `arg` is a flag (without `=value`) that takes a value. */
function takesValue(arg: string, options: ParseArgsOptionsConfig): boolean {
  return arg.startsWith('--') && !arg.includes('=') && options[arg.slice(2)]?.type === 'string';
}

/** `--flag -5` as `--flag=-5`: a negative number is a value, not another flag. */
function withNegativeNumbers(args: readonly string[], options: ParseArgsOptionsConfig): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const name = args[i]!.startsWith('--') ? args[i]!.slice(2) : undefined;
    const next = args[i + 1];
    if (name && options[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`${args[i]}=${next}`);
      i++;
    } else out.push(args[i]!);
  }
  return out;
}

export function commandLine<const Options extends ParseArgsOptionsConfig>(
  usage: string,
  options: Options,
  args: readonly string[] = process.argv.slice(2),
) {
  // Help is a flag of its own, not a value given to another (`--name -h` is a mistake, not a request for help).
  const help = (arg: string, i: number) => (arg === '--help' || arg === '-h') && !(i > 0 && takesValue(args[i - 1]!, options));
  if (args.some(help)) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  let parsed;
  try {
    parsed = parseArgs<{ allowPositionals: true; options: Options; args: string[]; tokens: true }>({
      allowPositionals: true,
      options,
      args: withNegativeNumbers(args, options),
      tokens: true,
    });
  } catch (error) {
    return usageError(usage, plainly(error));
  }
  // A flag that takes one value, given twice, would have its last value win silently (`--name x --name y`).
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option' || options[token.name]?.multiple) continue;
    if (seen.has(token.name)) usageError(usage, `${token.rawName} is given twice; give it once`);
    seen.add(token.name);
  }
  return { values: parsed.values, positionals: parsed.positionals };
}

/**
 * Refuses a flag the command does not take: ignored, it would leave the operator believing it had
 * applied (a `--expires` given to `revoke`, say). Flags given defaults in the parser would all look
 * given, so the tools apply their defaults after this.
 */
export function refuseFlagsNotTaken(usage: string, command: string, given: object, takes: readonly string[]): void {
  const stray = Object.keys(given).find((flag) => !takes.includes(flag));
  if (stray !== undefined) usageError(usage, `${command} does not take --${stray}`);
}

/** How a command's values reach the service: its usage, and the flag each of the service's fields comes from. */
export interface CommandFlags {
  usage: string;
  flags: Readonly<Record<string, string>>;
}

/**
 * How a command logs: on stderr, since its stdout is its output (a `--json` answer must parse), and
 * warnings alone unless LOG_LEVEL asks for more (`info` shows the migrations a command applied).
 */
export const COMMAND_LOG = { logLevel: process.env.LOG_LEVEL === undefined ? 'warn' : undefined, logTo: 'stderr' } as const;

/** What a command says when the database lets it down midway; nothing of its statement was kept. */
const DATABASE_FAILURES: Record<DatabaseFailure, string> = {
  'statement-timeout':
    'The database did not finish a statement within DB_STATEMENT_TIMEOUT_MS (a lock held elsewhere, or a busy server); nothing of it was kept. Try again.',
  unreachable: 'The database stopped answering; nothing of the statement under way was kept. Try again once it is back.',
  'concurrent-writes': 'The database undid the change for a concurrent one; nothing of it was kept. Try again.',
  'idempotency-key-claimed': 'The database refused the change; nothing of it was kept. Try again.',
  'schema-changed': "The database's tables changed shape under the command (an upgrade under way); nothing of it was kept. Try again.",
};

/**
 * Opens the database (migrating it first), runs `work`, and closes it. Invalid input is a mistake:
 * each field the service refused is named by the flag it came from, then the usage, with status 2.
 * A refusal (an unknown id), or the database failing midway, prints one sentence and exits with status
 * 1; so does a failure to start.
 */
export async function withDatabase(command: CommandFlags, work: (started: Started) => Promise<void>): Promise<void> {
  try {
    const started = await start({ migrate: true, ...COMMAND_LOG });
    try {
      await work(started);
    } catch (error) {
      const failure = databaseFailureOf(error);
      if (failure) {
        // The command had started: the database let it down, which is one sentence, not a crash.
        process.stderr.write(`${DATABASE_FAILURES[failure]}\n`);
        process.exitCode = 1;
        return;
      }
      if (!(error instanceof DomainError)) throw error;
      if (error instanceof ValidationError) {
        const said = error.fieldErrors.map((e) => `${command.flags[e.field] ?? e.field} ${e.message}`);
        process.stderr.write(`${said.join('\n')}\n${command.usage}\n`);
        process.exitCode = 2;
      } else {
        process.stderr.write(`${error.message}\n`);
        process.exitCode = 1;
      }
    } finally {
      await started.db.close();
    }
  } catch (error) {
    exitWithStartupFailure(error);
  }
}
