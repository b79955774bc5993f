// Loaded into the profiled server with `--import`: CPU profiling from the first SIGUSR2 to the second,
// written as a .cpuprofile into BENCH_PROFILE_DIR (with a `.started` file once it runs, for the
// benchmark to wait for). `node --cpu-prof` profiles the whole process
// life, so start-up (module compilation, type stripping, schema building) and the warm-up made up a
// share of every summary, largest in the lightest scenarios; the window holds the measured load
// alone.
import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';

const directory = process.env.BENCH_PROFILE_DIR;
if (!directory) throw new Error('profile-window.ts needs BENCH_PROFILE_DIR');

/** Microseconds between samples. */
const SAMPLING_INTERVAL_US = 100;

const session = new Session();
session.connect();
let profiling = false;

/** An in-process inspector session answers at once; the callback form keeps the handler synchronous. */
function post(method: string, then: (result: unknown) => void): void {
  session.post(method, (error, result) => {
    if (error) process.stderr.write(`profile window: ${method} failed: ${error.message}\n`);
    else then(result);
  });
}

process.on('SIGUSR2', () => {
  if (!profiling) {
    profiling = true;
    post('Profiler.enable', () =>
      // A sample every 100 µs, not V8's default of about 1 ms: a function taking 2% of a run then
      // gets hundreds of samples, not tens, and two profiles can be compared function by function.
      session.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US }, () =>
        post('Profiler.start', () => writeFileSync(path.join(directory, `window-${process.pid}.started`), '')),
      ),
    );
    return;
  }
  profiling = false;
  post('Profiler.stop', (result) => {
    const file = path.join(directory, `window-${process.pid}.cpuprofile`);
    // The inspector's answer to Profiler.stop is { profile }.
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- as said
    writeFileSync(`${file}.partial`, JSON.stringify((result as { profile: unknown }).profile));
    // Renamed once complete, so that the benchmark never reads half a file.
    renameSync(`${file}.partial`, file);
  });
});
