import { describe, expect, it } from 'vitest';
import { parseWorkloadKey, workloadKey } from './keys.ts';

describe('workload keys', () => {
  it.each([
    [{ kind: 'Deployment', namespace: 'ns', name: 'api' }],
    // A kind configured at run time (docs/custom-kinds.md) is keyed like a built-in one.
    [{ kind: 'Widget', namespace: 'ns', name: 'w1' }],
  ])('%j round-trips', (ref) => {
    expect(parseWorkloadKey(workloadKey(ref))).toEqual(ref);
  });

  it.each(['Deployment/ns', 'Deployment/ns/a/b', '/ns/a', 'Deployment//a', 'Deployment/ns/'])(
    '%s is not a key',
    (key) => {
      expect(parseWorkloadKey(key)).toBeUndefined();
    },
  );
});
