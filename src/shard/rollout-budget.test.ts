import { describe, expect, it } from 'vitest';
import { UNLIMITED_ROLLOUTS } from '../rollout/waves.ts';
import { budgetShare, sharedRolloutSettings } from './rollout-budget.ts';

describe('budgetShare', () => {
  it.each([
    // budget, members, shares in member order
    [0, ['a', 'b', 'c'], [0, 0, 0]],
    [10, ['a'], [10]],
    [10, ['a', 'b', 'c'], [4, 3, 3]],
    [9, ['c', 'a', 'b'], [3, 3, 3]],
    [5, ['a', 'b', 'c', 'd', 'e'], [1, 1, 1, 1, 1]],
    [2, ['a', 'b', 'c'], [1, 1, 1]],
  ])('%i over %j', (budget, members, shares) => {
    expect(members.map((identity) => budgetShare({ budget, members, identity }))).toEqual(shares);
  });

  it.each([1, 3, 7, 10, 100])('the shares of %i over 1…6 members add up to it', (budget) => {
    for (let count = 1; count <= Math.min(6, budget); count += 1) {
      const members = Array.from({ length: count }, (_, i) => `kreload-${String(i)}`);
      const total = members.reduce(
        (sum, identity) => sum + budgetShare({ budget, members, identity }),
        0,
      );
      expect(total).toBe(budget);
    }
  });

  it('a member not yet seen in the list counts itself', () => {
    expect(budgetShare({ budget: 10, members: ['b'], identity: 'a' })).toBe(5);
  });
});

describe('sharedRolloutSettings', () => {
  it('reads the share at each decision, the rest unchanged', () => {
    let members = ['a'];
    const settings = sharedRolloutSettings({ ...UNLIMITED_ROLLOUTS, maxConcurrent: 6 }, (budget) =>
      budgetShare({ budget, members, identity: 'a' }),
    );
    expect(settings.maxConcurrent).toBe(6);
    members = ['a', 'b', 'c'];
    expect(settings.maxConcurrent).toBe(2);
    expect(settings.waves).toBe(false);
  });
});
