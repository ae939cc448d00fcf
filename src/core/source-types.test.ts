import { describe, expect, it } from 'vitest';
import { BUILT_IN_KIND_TABLE } from '../rollout/kinds.ts';
import { explainTargetOf } from '../explain/targets.ts';
import { parseSourceKey, sourceKey } from './keys.ts';
import {
  asSourceType,
  SOURCE_TYPE_ROWS,
  SOURCE_TYPES,
  sourceTypeOfPrefix,
  sourceTypeRow,
} from './source-types.ts';

describe('the source-type table', () => {
  it('has one row per type, in the contract order', () => {
    expect(SOURCE_TYPES).toEqual(['CONFIGMAP', 'SECRET', 'SECRETPROVIDERCLASS']);
    expect(new Set(SOURCE_TYPE_ROWS.map((row) => row.keyPrefix)).size).toBe(SOURCE_TYPES.length);
  });

  it.each(SOURCE_TYPE_ROWS.map((row) => [row.type, row] as const))(
    '%s: every consumer of the row handles it',
    (type, row) => {
      expect(sourceTypeRow(type)).toBe(row);
      expect(asSourceType(type)).toBe(type);
      expect(sourceTypeOfPrefix(row.keyPrefix)).toBe(type);
      expect(parseSourceKey(sourceKey(type, 'app-config'))).toEqual({ type, name: 'app-config' });
      for (const word of [row.kind, row.kind.toUpperCase(), row.plural, ...row.shortNames]) {
        expect(explainTargetOf(word, BUILT_IN_KIND_TABLE)).toEqual({ what: 'source', type });
      }
    },
  );

  it.each([['configmaps'], ['ConfigMap'], [''], [undefined], [7], ['__proto__']])(
    'asSourceType(%j) names no type unless it is one exactly',
    (value) => {
      expect(asSourceType(value)).toBeUndefined();
    },
  );

  it.each([['CONFIGMAP'], ['configmaps'], ['toString'], ['']])(
    'sourceTypeOfPrefix(%j) is undefined for a word that is not a key prefix',
    (prefix) => {
      expect(sourceTypeOfPrefix(prefix)).toBeUndefined();
    },
  );
});
