import { describe, expect, it } from 'vitest';
import { MinHeap } from './min-heap.ts';

describe('MinHeap', () => {
  it('pops in order whatever the insertion order', () => {
    const heap = new MinHeap<number>((a, b) => a < b);
    const input = [5, 3, 9, 1, 1, 8, 2, 7, 0, 6, 4];
    for (const n of input) heap.push(n);
    const out: number[] = [];
    for (let n = heap.pop(); n !== undefined; n = heap.pop()) out.push(n);
    expect(out).toEqual([...input].sort((a, b) => a - b));
    expect(heap.size).toBe(0);
  });

  it('peeks without removing and clears', () => {
    const heap = new MinHeap<number>((a, b) => a < b);
    expect(heap.peek()).toBeUndefined();
    heap.push(2);
    heap.push(1);
    expect(heap.peek()).toBe(1);
    expect(heap.size).toBe(2);
    heap.clear();
    expect(heap.pop()).toBeUndefined();
  });
});
