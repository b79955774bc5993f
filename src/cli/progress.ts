// A one-line progress bar on stderr; without a terminal it prints a line every 10% instead.
export class Progress {
  readonly #label: string;
  readonly #total: number;
  #done = 0;
  #lastDecile = -1;
  readonly #started = performance.now();

  constructor(label: string, total: number) {
    this.#label = label;
    this.#total = Math.max(total, 1);
  }

  advance(count: number): void {
    this.#done = Math.min(this.#done + count, this.#total);
    const ratio = this.#done / this.#total;
    const seconds = ((performance.now() - this.#started) / 1000).toFixed(1);
    const line = `${this.#label} ${this.#done.toLocaleString('en')}/${this.#total.toLocaleString('en')} (${Math.floor(ratio * 100)}%, ${seconds}s)`;
    if (process.stderr.isTTY) {
      const width = 30;
      const filled = Math.round(ratio * width);
      process.stderr.write(`\r[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${line}`);
      if (this.#done === this.#total) process.stderr.write('\n');
    } else {
      const decile = Math.floor(ratio * 10);
      if (decile !== this.#lastDecile) {
        this.#lastDecile = decile;
        process.stderr.write(`${line}\n`);
      }
    }
  }
}
