import { describe, expect, it } from 'vitest';
import type { Mark } from './marks.ts';
import { aCreateMark, aDeleteMark } from '../testing/marks.ts';
import { countingCreateMark, markCounts } from './marks.ts';

const create = (uid: string, at = 0) => aCreateMark('configmap/app', uid, at);
const remove = (uid: string, at = 0) => aDeleteMark('configmap/app', uid, {}, at);

describe('consumption rules (§5.4)', () => {
  it.each([
    ['create, same UID exists', create('u1'), { uid: 'u1' }, true],
    ['create, other UID exists', create('u1'), { uid: 'u2' }, false],
    ['create, absent', create('u1'), undefined, false],
    ['delete, still absent', remove('u1'), undefined, true],
    ['delete, recreated', remove('u1'), { uid: 'u2' }, false],
  ] as const)('%s → counts %s', (_name, mark, current, expected) => {
    expect(markCounts(mark, current)).toBe(expected);
  });

  it('finds the counting create mark for the current UID', () => {
    const marks: Mark[] = [remove('u1'), create('u1'), create('u2')];
    expect(countingCreateMark(marks, 'configmap/app', { uid: 'u2' })).toBe(marks[2]);
    expect(countingCreateMark(marks, 'configmap/app', undefined)).toBeUndefined();
    expect(countingCreateMark(marks, 'secret/app', { uid: 'u2' })).toBeUndefined();
  });
});
