import { describe, expect, it } from 'vitest';
import { booleanAt, numberAt, objectAt, objectsAt, stringAt } from './json.ts';

const OBJ: unknown = JSON.parse(
  '{"a":{"b":{"s":"x","n":3,"t":true,"list":[{"k":1},2,null,{"k":2}]},"arr":[1]},"top":"y"}',
);

describe('JSON readers', () => {
  it.each<[string, readonly string[], unknown, unknown, unknown, unknown]>([
    // path, stringAt, numberAt, booleanAt, objectAt
    ['a top-level string', ['top'], 'y', undefined, false, undefined],
    ['a nested string', ['a', 'b', 's'], 'x', undefined, false, undefined],
    ['a nested number', ['a', 'b', 'n'], undefined, 3, false, undefined],
    ['a nested true', ['a', 'b', 't'], undefined, undefined, true, undefined],
    ['a nested object', ['a', 'b'], undefined, undefined, false, expect.any(Object)],
    ['a missing step', ['a', 'x', 's'], undefined, undefined, false, undefined],
    ['a step through a string', ['top', 'length'], undefined, undefined, false, undefined],
    ['a step through an array', ['a', 'arr', '0'], undefined, undefined, false, undefined],
    ['an inherited name', ['a', 'constructor'], undefined, undefined, false, undefined],
  ])('%s', (_case, path, string, number, boolean, object) => {
    expect(stringAt(OBJ, path)).toBe(string);
    expect(numberAt(OBJ, path)).toBe(number);
    expect(booleanAt(OBJ, path)).toBe(boolean);
    expect(objectAt(OBJ, path)).toEqual(object);
  });

  it.each<[string, unknown, readonly string[], readonly unknown[]]>([
    ['the objects of an array, others skipped', OBJ, ['a', 'b', 'list'], [{ k: 1 }, { k: 2 }]],
    ['not an array', OBJ, ['a', 'b'], []],
    ['missing', OBJ, ['a', 'none'], []],
    ['not an object at the root', 'text', ['a'], []],
  ])('objectsAt: %s', (_case, value, path, expected) => {
    expect(objectsAt(value, path)).toEqual(expected);
  });
});
