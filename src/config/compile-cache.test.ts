import { describe, expect, it } from 'vitest';
import { compileCacheDirectory } from './compile-cache.ts';

describe('compileCacheDirectory', () => {
  it.each([
    {
      env: { XDG_CACHE_HOME: '/xdg', HOME: '/home/k' },
      expected: '/xdg/kreload/node-compile-cache',
    },
    { env: { HOME: '/home/k' }, expected: '/home/k/.cache/kreload/node-compile-cache' },
    {
      env: { XDG_CACHE_HOME: '', HOME: '/home/k' },
      expected: '/home/k/.cache/kreload/node-compile-cache',
    },
    // Nowhere of the user's own: no cache rather than a shared temporary directory.
    { env: { HOME: '' }, expected: undefined },
    { env: {}, expected: undefined },
  ])('$env → $expected', ({ env, expected }) => {
    expect(compileCacheDirectory(env)).toBe(expected);
  });
});
