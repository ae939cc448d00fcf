/** A binary min-heap ordered by `before(a, b)` (true when `a` must come out first). */
export class MinHeap<T> {
  readonly #before: (a: T, b: T) => boolean;
  readonly #items: T[] = [];

  constructor(before: (a: T, b: T) => boolean) {
    this.#before = before;
  }

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    const items = this.#items;
    items.push(item);
    let index = items.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.#swapIfBefore(index, parent)) break;
      index = parent;
    }
  }

  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    items[0] = last;
    this.#siftDown();
    return top;
  }

  clear(): void {
    this.#items.length = 0;
  }

  #siftDown(): void {
    const length = this.#items.length;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) return;
      const right = left + 1;
      const child = right < length && this.#isBefore(right, left) ? right : left;
      if (!this.#swapIfBefore(child, index)) return;
      index = child;
    }
  }

  #isBefore(i: number, j: number): boolean {
    const a = this.#items[i];
    const b = this.#items[j];
    return a !== undefined && b !== undefined && this.#before(a, b);
  }

  /** Swaps `child` with `parent` when `child` must come out first; reports whether it did. */
  #swapIfBefore(child: number, parent: number): boolean {
    const items = this.#items;
    const a = items[child];
    const b = items[parent];
    if (a === undefined || b === undefined || !this.#before(a, b)) return false;
    items[child] = b;
    items[parent] = a;
    return true;
  }
}
