/**
 * A row of rollout/kinds.ts is all a kind needs: every lookup that varies by kind answers from the
 * row alone, for every row. A new kind that passes here is watched, projected, keyed and addressed.
 */
import { BUILT_IN_KIND_TABLE } from '../rollout/kinds.ts';
import { describe, expect, it } from 'vitest';
import { parseWorkloadKey, workloadKey } from '../core/keys.ts';
import { DEFAULT_ANNOTATION_KEYS } from '../core/types.ts';
import { IGNORABLE_WORKLOAD_TYPES } from '../config/options.ts';
import type { WorkloadKindRow, WorkloadSpecFlag } from '../rollout/kinds.ts';
import { WORKLOAD_KINDS } from '../rollout/kinds.ts';
import { plannedKinds } from '../watch/watch-plan.ts';
import { buildReadinessReport } from '../http/readiness.ts';
import { apiVersionOf, resourcePath, workloadResource } from './resources.ts';
import { projectWorkload } from './workload-projection.ts';

const ALL_SPEC_FLAGS: readonly WorkloadSpecFlag[] = [
  'paused',
  'suspended',
  'manualSelector',
  'hasWorkloadRef',
  'hasConfigChangeTrigger',
];

const POD_TEMPLATE = {
  metadata: { annotations: { [DEFAULT_ANNOTATION_KEYS.auto]: 'true' } },
  spec: { containers: [{ name: 'app', envFrom: [{ configMapRef: { name: 'cm' } }] }] },
};

/** `value` nested under `path`, e.g. `['spec', 'template']` → `{ spec: { template: value } }`. */
function nestedAt(path: readonly string[], value: object): Record<string, unknown> {
  return path.reduceRight<Record<string, unknown>>((inner, key) => ({ [key]: inner }), {
    ...value,
  });
}

/** An object of the row's kind that sets every spec fact any kind reads, template included. */
function objectOf(row: WorkloadKindRow): Record<string, unknown> {
  const withTemplate = nestedAt(row.templatePath ?? [], POD_TEMPLATE);
  const templateSpec = withTemplate.spec as Record<string, unknown>;
  return {
    apiVersion: row.apiVersion,
    kind: row.kind,
    metadata: { name: 'w', namespace: 'ns', uid: 'u-1', resourceVersion: '7' },
    spec: {
      ...templateSpec,
      paused: true,
      suspend: true,
      manualSelector: true,
      workloadRef: { kind: 'Deployment', name: 'other' },
      triggers: [{ type: 'ConfigChange' }],
    },
  };
}

describe.each(WORKLOAD_KINDS.map((row) => [row.kind, row] as const))('kind row %s', (_, row) => {
  it('addresses the API from the row', () => {
    const api = workloadResource(row);
    expect(api).toEqual({
      group: row.group,
      version: row.version,
      plural: row.plural,
      namespaced: true,
    });
    expect(apiVersionOf(api)).toBe(row.apiVersion);
    expect(resourcePath(api, { namespace: 'ns', name: 'w' })).toBe(
      `/apis/${row.apiVersion}/namespaces/ns/${row.plural}/w`,
    );
  });

  it('keys work items by the row kind', () => {
    const ref = { kind: row.kind, namespace: 'ns', name: 'w' };
    expect(parseWorkloadKey(workloadKey(ref))).toEqual(ref);
  });

  it('projects the template at the row path and exactly the row spec flags', () => {
    const view = projectWorkload(row, objectOf(row), {
      keys: DEFAULT_ANNOTATION_KEYS,
      keepLabels: false,
    });
    expect(view?.ref).toEqual({ kind: row.kind, namespace: 'ns', name: 'w' });
    expect(view?.templateAnnotations).toEqual({ [DEFAULT_ANNOTATION_KEYS.auto]: 'true' });
    expect(view?.podSpec.containers.map((c) => c.envConfigMaps)).toEqual([['cm']]);
    for (const flag of ALL_SPEC_FLAGS) {
      expect({ flag, value: view?.[flag] }).toEqual({ flag, value: row.specFlags.includes(flag) });
    }
  });

  it('is planned from the row: optional API, enabling option, ignorability', () => {
    const everything = plannedKinds(
      {
        ignoredWorkloadTypes: [],
        isArgoRollouts: true,
        isOpenshift: 'auto',
      },
      BUILT_IN_KIND_TABLE,
    );
    expect(everything.always.includes(row.kind)).toBe(!row.optionalApi);
    expect(everything.ifServed.includes(row.kind)).toBe(row.optionalApi);

    const ignored = plannedKinds(
      {
        ignoredWorkloadTypes: [row.plural],
        isArgoRollouts: true,
        isOpenshift: 'true',
      },
      BUILT_IN_KIND_TABLE,
    );
    expect([...ignored.always, ...ignored.ifServed].includes(row.kind)).toBe(!row.ignorable);

    const optionOff = plannedKinds(
      {
        ignoredWorkloadTypes: [],
        isArgoRollouts: false,
        isOpenshift: 'false',
      },
      BUILT_IN_KIND_TABLE,
    );
    expect([...optionOff.always, ...optionOff.ifServed].includes(row.kind)).toBe(
      row.enabledByOption === undefined,
    );
  });

  it('counts in /readyz under its plural, as a kind that can be rolled', () => {
    const report = buildReadinessReport({
      watches: [
        { resource: 'configmaps', namespace: 'ns', status: 'ok' },
        { resource: row.plural, namespace: 'ns', status: 'ok' },
      ],
      unwatched: {},
      apiServer: 'ok',
      leaderElection: 'disabled',
      leaseReadAgoMs: undefined,
      shuttingDown: false,
    });
    expect(report.checks.kinds[row.plural]).toBe('ok');
    expect(report.checks.permitted).toBe(true);
  });
});

it('--ignored-workload-types accepts exactly the plurals of the ignorable rows', () => {
  const ignorable = WORKLOAD_KINDS.filter((row) => row.ignorable).map((row) => row.plural);
  expect([...IGNORABLE_WORKLOAD_TYPES].sort()).toEqual(ignorable.sort());
});
