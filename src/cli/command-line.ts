// The arguments of a command-line tool, parsed; a mistake in them prints what is wrong and the tool's
// usage, and exits with status 2.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { messageOf } from '../guards.ts';

/** Prints `message` and the usage, and exits with status 2. */
export function usageError(usage: string, message: string): never {
  process.stderr.write(`${message}\n${usage}\n`);
  process.exit(2);
}

export function commandLine<const Options extends ParseArgsOptionsConfig>(usage: string, options: Options) {
  try {
    return parseArgs<{ allowPositionals: true; options: Options }>({ allowPositionals: true, options });
  } catch (error) {
    return usageError(usage, messageOf(error));
  }
}
