import { describe, expect, it } from 'vitest';
import { CustomKindsError, parseCustomKinds } from './custom-kinds.ts';
import { parseOptions } from './parse-options.ts';
import { ConfigError } from './config-error.ts';

const WIDGET = {
  group: 'example.kreload.io',
  version: 'v1',
  kind: 'Widget',
  resource: 'widgets',
  podTemplatePath: 'spec.template',
  podSelectorPath: 'spec.selector',
  status: {
    observedGeneration: 'status.observedGeneration',
    updatedReplicas: 'status.updatedReplicas',
    availableReplicas: 'status.availableReplicas',
  },
};

function problemsOf(rows: unknown): readonly string[] {
  try {
    parseCustomKinds(JSON.stringify(rows));
  } catch (error) {
    if (error instanceof CustomKindsError) return error.problems;
    throw error;
  }
  return [];
}

describe('--custom-workload-kinds rows', () => {
  it('a full row: a merge-patched optional API, rolled by template or by eviction', () => {
    const [row] = parseCustomKinds(JSON.stringify([WIDGET]));
    expect(row).toMatchObject({
      kind: 'Widget',
      plural: 'widgets',
      apiVersion: 'example.kreload.io/v1',
      templatePath: ['spec', 'template'],
      templatePatchType: 'merge',
      metadataPatchType: 'merge',
      appliedState: 'PT',
      rollAction: 'template-patch',
      optionalApi: true,
      configured: true,
      health: 'replica-set',
      statusPaths: {
        observedGeneration: ['status', 'observedGeneration'],
        desired: ['spec', 'replicas'],
        replicas: undefined,
        updated: ['status', 'updatedReplicas'],
        available: ['status', 'availableReplicas'],
      },
      podEviction: {
        owners: 'direct',
        selectorPath: ['spec', 'selector'],
        desiredPath: ['spec', 'replicas'],
        maxUnavailablePath: [],
      },
      rbac: {
        verbs: ['get', 'list', 'watch', 'patch'],
        also: [
          { group: '', resource: 'pods', verbs: ['get', 'list'] },
          { group: '', resource: 'pods/eviction', verbs: ['create'] },
        ],
      },
    });
  });

  it('without a template path: rolled by eviction only, the applied state in W', () => {
    const [row] = parseCustomKinds(JSON.stringify([{ ...WIDGET, podTemplatePath: undefined }]));
    expect(row).toMatchObject({
      templatePath: undefined,
      rollAction: 'evict-pods',
      appliedState: 'W',
    });
  });

  it('strategies ["rollout"] drops the eviction grants', () => {
    const [row] = parseCustomKinds(JSON.stringify([{ ...WIDGET, strategies: ['rollout'] }]));
    expect(row?.podEviction).toBeUndefined();
    expect(row?.rbac.also).toEqual([]);
  });

  it.each([
    [
      { ...WIDGET, kind: 'widget' },
      'row 1 (widget): kind: must be a kind like "Widget", got "widget"',
    ],
    [
      { ...WIDGET, group: '' },
      'row 1 (Widget): group: must be an API group like "example.com", got ""',
    ],
    [
      { ...WIDGET, version: '1' },
      'row 1 (Widget): version: must be an API version like "v1" or "v1beta1", got "1"',
    ],
    [
      { ...WIDGET, resource: 'Widgets' },
      'row 1 (Widget): resource: must be the plural resource name like "widgets", got "Widgets"',
    ],
    [
      { ...WIDGET, namespaced: false },
      'row 1 (Widget): namespaced: only namespaced kinds are supported: omit it or set true',
    ],
    [
      { ...WIDGET, podTemplatePath: 'spec..template' },
      'row 1 (Widget): podTemplatePath: must be a dotted field path like "spec.template", got "spec..template"',
    ],
    [
      { ...WIDGET, podOwnership: 'parent' },
      'row 1 (Widget): podOwnership: must be one of direct, selector, got "parent"',
    ],
    [
      { ...WIDGET, template: 'spec.template' },
      'row 1 (Widget): template: unknown field; expected one of group, version, kind, resource, namespaced, shortNames, podTemplatePath, podSelectorPath, podOwnership, replicasPath, maxUnavailablePath, status, strategies',
    ],
    [
      { ...WIDGET, status: { updatedReplicas: 'status.updated' } },
      'row 1 (Widget): status.availableReplicas: is required',
    ],
    [
      { ...WIDGET, strategies: ['restart'] },
      'row 1 (Widget): strategies: must be a non-empty list of rollout, evict, got ["restart"]',
    ],
    [
      { ...WIDGET, podSelectorPath: undefined, strategies: ['evict'] },
      'row 1 (Widget): strategies: "evict" finds the pods by their selector: it needs podSelectorPath',
    ],
    [
      { ...WIDGET, podTemplatePath: undefined, strategies: ['rollout'] },
      'row 1 (Widget): strategies: "rollout" patches the pod template: it needs podTemplatePath',
    ],
    [
      { ...WIDGET, podTemplatePath: undefined, podSelectorPath: undefined },
      'row 1 (Widget): podTemplatePath: a kind needs a podTemplatePath, a podSelectorPath or both',
    ],
    [
      { ...WIDGET, kind: 'Deployment' },
      'the configured kind Deployment: the name "deployment" is already taken by the built-in kind Deployment',
    ],
    [
      { ...WIDGET, shortNames: ['deploy'] },
      'the configured kind Widget: the name "deploy" is already taken by the built-in kind Deployment',
    ],
    ['Widget', 'row 1: must be an object, got "Widget"'],
  ])('%j: %s', (row, problem) => {
    expect(problemsOf([row])).toContain(problem);
  });

  it('two rows of one kind: the second is refused', () => {
    expect(problemsOf([WIDGET, WIDGET])).toEqual([
      'the configured kind Widget: the name "widget" is already taken by the configured kind Widget',
      'the configured kind Widget: the name "widgets" is already taken by the configured kind Widget',
    ]);
  });

  it('not a JSON list', () => {
    expect(problemsOf({ kind: 'Widget' })).toEqual([
      'must be a JSON list of kinds, got {"kind":"Widget"}',
    ]);
    expect(() => parseCustomKinds('[')).toThrow(/not valid JSON/);
  });
});

describe('--custom-workload-kinds as an option', () => {
  it('inline JSON, or KRELOAD_CUSTOM_WORKLOAD_KINDS', async () => {
    const inline = await parseOptions([`--custom-workload-kinds=${JSON.stringify([WIDGET])}`], {});
    const env = await parseOptions([], { KRELOAD_CUSTOM_WORKLOAD_KINDS: JSON.stringify([WIDGET]) });
    expect(inline.customWorkloadKinds.map((row) => row.kind)).toEqual(['Widget']);
    expect(env.customWorkloadKinds).toEqual(inline.customWorkloadKinds);
  });

  it('a bad row is a configuration error naming the flag, the row and the field', async () => {
    const bad = JSON.stringify([{ ...WIDGET, version: 'one' }]);
    const error = await parseOptions([`--custom-workload-kinds=${bad}`], {}).catch(
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      '--custom-workload-kinds: row 1 (Widget): version: must be an API version like "v1" or "v1beta1", got "one"',
    ]);
  });

  it('a file that cannot be read is a configuration error', async () => {
    const error = await parseOptions(['--custom-workload-kinds=/nonexistent/kinds.json'], {}).catch(
      (thrown: unknown) => thrown,
    );
    expect((error as ConfigError).problems[0]).toMatch(
      /^--custom-workload-kinds: cannot read "\/nonexistent\/kinds.json": ENOENT/,
    );
  });
});
