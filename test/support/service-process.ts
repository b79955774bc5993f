// The service itself (`node src/main.ts api`) as a child process on a test's database, for tests
// that must see it die (a crash at a failpoint) and come back.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { TEST_PEPPER, TEST_WEBHOOK_SECRET_KEY } from './server.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface ServiceProcess {
  url: string;
  /** How the process ended: its signal or exit code. */
  exited: Promise<NodeJS.Signals | number | null>;
  /** What it wrote on stdout so far (its JSON log lines). */
  output(): string;
  /** Sends the process a signal (SIGTERM: a clean stop). */
  stop(signal?: NodeJS.Signals): void;
}

/**
 * Starts the service on `databaseUrl` with these failpoints armed (and `env` added); resolves once it
 * listens, or for the worker alone, once the worker runs.
 */
export async function startServiceProcess(
  databaseUrl: string,
  dataDir: string,
  failpoints: string,
  { role = 'api', env = {} }: { role?: 'all' | 'api' | 'worker'; env?: Record<string, string> } = {},
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['src/main.ts', role], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      API_KEY_PEPPER: TEST_PEPPER,
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      NODE_ENV: 'development',
      PORTICO_FAILPOINTS: failpoints,
      WEBHOOK_SECRET_KEY: TEST_WEBHOOK_SECRET_KEY,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  let output = '';
  // Read, or a child that writes more than a pipe holds to stderr would block on its next write.
  let errors = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors = (errors + chunk).slice(-10_000)));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const listening = /"port":(\d+)/.exec(output);
      if (listening) resolve(Number(listening[1]));
      if (role === 'worker' && output.includes('webhook worker started')) resolve(0);
    });
    void exited.then((how) => reject(new Error(`the service exited (${String(how)}) before listening: ${output}${errors}`)));
  });
  return { url: `http://127.0.0.1:${port}`, exited, output: () => output, stop: (signal = 'SIGTERM') => child.kill(signal) };
}
