/** Counts by key, holding only the keys counted above zero (so its size is what is under way now). */
export class Tally<K> extends Map<K, number> {
  add(key: K): void {
    this.set(key, (this.get(key) ?? 0) + 1);
  }

  remove(key: K): void {
    const left = (this.get(key) ?? 0) - 1;
    if (left <= 0) this.delete(key);
    else this.set(key, left);
  }
}
