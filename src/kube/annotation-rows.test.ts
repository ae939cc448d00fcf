/**
 * A row of core/annotations.ts is all an annotation key needs: the option that renames it, the
 * projections that keep it and the relevance check all answer from the row, for every row. A row some consumer does not handle fails here.
 */
import { kindRow } from '../rollout/kinds.ts';
import { describe, expect, it } from 'vitest';
import type { AnnotationRow } from '../core/annotations.ts';
import { ANNOTATION_ROWS, DEFAULT_ANNOTATION_KEYS } from '../core/annotations.ts';
import type { AnnotationKeys, WorkloadView } from '../core/types.ts';
import { OPTION_SPECS } from '../config/options.ts';
import { parseOptions } from '../config/parse-options.ts';
import { trackingChanged } from '../watch/workload-store.ts';
import { projectConfigMap } from './projections.ts';
import { projectWorkload } from './workload-projection.ts';

const KEYS = DEFAULT_ANNOTATION_KEYS;

/** The key of `row` under `keys`: configured rows are renamed, fixed ones are not. */
function keyOf(row: AnnotationRow, keys: AnnotationKeys): string {
  return row.configured ? keys[row.name as keyof AnnotationKeys] : row.key;
}

function deployment(workload: Record<string, string>, template: Record<string, string>): unknown {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'w', namespace: 'ns', uid: 'u-1', annotations: workload },
    spec: {
      template: {
        metadata: { annotations: template },
        spec: { containers: [{ name: 'app', envFrom: [{ configMapRef: { name: 'cm' } }] }] },
      },
    },
  };
}

function view(workload: Record<string, string>, template: Record<string, string>): WorkloadView {
  const projected = projectWorkload(kindRow('Deployment'), deployment(workload, template), {
    keys: KEYS,
    keepLabels: false,
  });
  if (projected === undefined) throw new Error('not projected');
  return projected;
}

describe.each(ANNOTATION_ROWS.map((row) => [row.key, row] as const))(
  'annotation row %s',
  (_, row) => {
    it('is renamed by its option, whose default is the key', async () => {
      const spec = OPTION_SPECS.find((candidate) => candidate.name === row.option);
      if (row.option === undefined) {
        expect(spec).toBeUndefined();
        return;
      }
      expect(spec).toMatchObject({ type: 'annotation-key', default: row.key });
      const options = await parseOptions([`${spec?.flag ?? ''}=example.com/renamed`], {});
      expect(keyOf(row, options.annotationKeys)).toBe('example.com/renamed');
    });

    it('is kept on W and PT by the workload projection exactly when the row says so', () => {
      const key = keyOf(row, KEYS);
      const projected = view({ [key]: 'v' }, { [key]: 'v' });
      expect(Object.hasOwn(projected.annotations, key)).toBe(row.kept);
      expect(Object.hasOwn(projected.templateAnnotations, key)).toBe(row.kept);
    });

    it('is kept by the source projection exactly when it lives on S', () => {
      const key = keyOf(row, KEYS);
      const source = projectConfigMap(
        { metadata: { name: 'cm', namespace: 'ns', uid: 'u-2', annotations: { [key]: 'true' } } },
        { ...KEYS, keepLabels: false },
      );
      expect(Object.hasOwn(source?.annotations ?? {}, key)).toBe(row.on.includes('S'));
    });

    it.each(['W', 'PT'] as const)(
      'moves relevantSince on %s exactly when tracked there',
      (placement) => {
        const key = keyOf(row, KEYS);
        const set = { [key]: 'true' };
        const before = view({}, {});
        const after = placement === 'W' ? view(set, {}) : view({}, set);
        expect(trackingChanged(before, after, KEYS)).toBe(row.tracked.includes(placement));
      },
    );
  },
);

describe('annotation options', () => {
  it('each rename a key of the table', () => {
    const named = new Set(ANNOTATION_ROWS.map((row) => row.option));
    const annotationOptions = OPTION_SPECS.filter((spec) => spec.type === 'annotation-key');
    expect(annotationOptions.filter((spec) => !named.has(spec.name))).toEqual([]);
  });
});
