// The ReloadPolicy CRD's validation on a real kube-apiserver (docs/reload-policy.md#validation):
// each bad policy is rejected at create with the CRD's own message, a good one is stored with the
// selector defaults filled in. No kreload process: the API server alone enforces these rules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { KubeJsonError, stringAt, type JsonRecord, type KubeJson } from '../harness/crds.ts';
import { createPolicy, installPolicyCrd } from '../harness/reload-policies.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';

const cluster = sharedCluster();
let client: KubeJson;
let namespace = '';

beforeAll(async () => {
  client = await installPolicyCrd(cluster);
  namespace = await cluster.createNamespace('policy-crd');
});

afterAll(async () => {
  if (namespace !== '') {
    await cluster.kc.makeApiClient(CoreV1Api).deleteNamespace({ name: namespace });
  }
});

const SOURCE = { kind: 'ConfigMap', name: 'app-config' };
const TARGET = { kind: 'Deployment', name: 'web' };

interface RejectionCase {
  readonly title: string;
  readonly spec: JsonRecord;
  /** The Status message after `ReloadPolicy.kreload.io "bad" is invalid: `. */
  readonly message: string;
}

const REJECTIONS: readonly RejectionCase[] = [
  {
    title: 'a source with both name and selector',
    spec: {
      sources: [{ ...SOURCE, selector: { matchLabels: { app: 'web' } } }],
      targets: [TARGET],
    },
    message: 'spec.sources[0]: Invalid value: a source needs exactly one of name or selector',
  },
  {
    title: 'a source with neither name nor selector',
    spec: { sources: [{ kind: 'Secret' }], targets: [TARGET] },
    message: 'spec.sources[0]: Invalid value: a source needs exactly one of name or selector',
  },
  {
    title: 'a source of an unknown kind',
    spec: { sources: [{ kind: 'Pod', name: 'x' }], targets: [TARGET] },
    message:
      'spec.sources[0].kind: Invalid value: source kind must be one of ConfigMap, Secret, SecretProviderClass',
  },
  {
    title: 'a source with an empty selector',
    spec: { sources: [{ kind: 'ConfigMap', selector: {} }], targets: [TARGET] },
    message:
      'spec.sources[0].selector: Invalid value: a source selector needs matchLabels or matchExpressions; an empty selector would select every object',
  },
  {
    title: 'a target with both name and selector',
    spec: {
      sources: [SOURCE],
      targets: [{ ...TARGET, selector: { matchLabels: { app: 'web' } } }],
    },
    message: 'spec.targets[0]: Invalid value: a target needs exactly one of name or selector',
  },
  {
    title: 'a target of an unknown kind',
    spec: { sources: [SOURCE], targets: [{ kind: 'ReplicaSet', name: 'web' }] },
    message:
      'spec.targets[0].kind: Invalid value: target kind must be one of Deployment, DaemonSet, StatefulSet, CronJob, Job, Rollout, DeploymentConfig',
  },
  {
    title: 'a target selector expression In without values',
    spec: {
      sources: [SOURCE],
      targets: [
        { kind: 'Deployment', selector: { matchExpressions: [{ key: 'app', operator: 'In' }] } },
      ],
    },
    message:
      'spec.targets[0].selector.matchExpressions[0]: Invalid value: In and NotIn need values; Exists and DoesNotExist take none',
  },
  {
    title: 'an unknown strategy',
    spec: { sources: [SOURCE], targets: [TARGET], strategy: 'rolling' },
    message:
      'spec.strategy: Invalid value: "rolling": strategy must be one of env-vars, annotations, restart, evict',
  },
  {
    title: 'a rollout priority past 9 digits',
    spec: { sources: [SOURCE], targets: [TARGET], rollout: { priority: 1_000_000_000 } },
    message:
      'spec.rollout.priority: Invalid value: 1000000000: spec.rollout.priority in body should be less than or equal to 999999999',
  },
  {
    title: 'strategy restart on a Deployment',
    spec: { sources: [SOURCE], targets: [TARGET], strategy: 'restart' },
    message:
      'spec.strategy: Invalid value: strategy restart applies to Argo Rollouts only; every target must be of kind Rollout',
  },
  {
    title: 'a syncDelay that is not a Go duration',
    spec: { sources: [SOURCE], targets: [TARGET], syncDelay: '5 seconds' },
    message:
      'spec.syncDelay: Invalid value: "5 seconds": syncDelay must be a Go duration such as 5s or 1m30s, from 0s to 1h',
  },
  {
    title: 'a syncDelay over 1h',
    spec: { sources: [SOURCE], targets: [TARGET], syncDelay: '61m' },
    message:
      'spec.syncDelay: Invalid value: "61m": syncDelay must be a Go duration such as 5s or 1m30s, from 0s to 1h',
  },
  {
    title: 'a canary over 100%',
    spec: { sources: [SOURCE], targets: [TARGET], rollout: { canary: '101%' } },
    message:
      'spec.rollout.canary: Invalid value: "101%": canary must be a count from 1 to 100000 or a percentage from 1% to 100%',
  },
  {
    title: 'a negative rollout.maxConcurrent',
    spec: { sources: [SOURCE], targets: [TARGET], rollout: { maxConcurrent: -1 } },
    message:
      'spec.rollout.maxConcurrent: Invalid value: -1: spec.rollout.maxConcurrent in body should be greater than or equal to 1',
  },
  {
    title: 'a breaker period past 2^31 ms',
    spec: { sources: [SOURCE], targets: [TARGET], breaker: { period: '600h' } },
    message:
      'spec.breaker.period: Invalid value: "600h": breaker.period must be a Go duration such as 10m, from 1s to 24h',
  },
  {
    title: 'windows without a window',
    spec: { sources: [SOURCE], targets: [TARGET], windows: { timezone: 'UTC', deny: [] } },
    message: 'spec.windows: Invalid value: windows needs at least one window in windows or deny',
  },
  {
    title: 'a negative pausePeriod',
    spec: { sources: [SOURCE], targets: [TARGET], pausePeriod: '-5m' },
    message:
      'spec.pausePeriod: Invalid value: "-5m": pausePeriod must be a Go duration such as 5m or 1h, from 0s to 24h',
  },
  {
    title: 'a pausePeriod over 24h',
    spec: { sources: [SOURCE], targets: [TARGET], pausePeriod: '25h' },
    message:
      'spec.pausePeriod: Invalid value: "25h": pausePeriod must be a Go duration such as 5m or 1h, from 0s to 24h',
  },
  {
    title: 'a pausePeriod with a StatefulSet target',
    spec: {
      sources: [SOURCE],
      targets: [TARGET, { kind: 'StatefulSet', name: 'db' }],
      pausePeriod: '5m',
    },
    message:
      'spec.pausePeriod: Invalid value: pausePeriod applies to Deployments only; every target must be of kind Deployment',
  },
  {
    title: 'configRevisions with a CronJob target',
    spec: {
      sources: [SOURCE],
      targets: [TARGET, { kind: 'CronJob', name: 'nightly' }],
      configRevisions: { configMaps: true },
    },
    message:
      'spec.configRevisions: Invalid value: configRevisions applies to Deployments, StatefulSets and DaemonSets only; every target must be of one of these kinds',
  },
  {
    title: 'configRevisions.secrets without configMaps',
    spec: { sources: [SOURCE], targets: [TARGET], configRevisions: { secrets: true } },
    message:
      'spec.configRevisions.secrets: Invalid value: configRevisions.secrets needs configMaps true; Secrets are pinned only together with ConfigMaps',
  },
  {
    title: 'a source name no object can have',
    spec: { sources: [{ kind: 'ConfigMap', name: 'App_Config' }], targets: [TARGET] },
    message:
      "spec.sources[0].name: Invalid value: \"App_Config\": name must be a valid object name (lower case alphanumeric characters, '-' or '.', starting and ending alphanumeric); no object can have this one",
  },
  {
    title: 'a target name no object can have',
    spec: { sources: [SOURCE], targets: [{ kind: 'Deployment', name: 'Web' }] },
    message:
      "spec.targets[0].name: Invalid value: \"Web\": name must be a valid object name (lower case alphanumeric characters, '-' or '.', starting and ending alphanumeric); no object can have this one",
  },
  {
    title: 'a selector key written as an expression',
    spec: {
      sources: [{ kind: 'ConfigMap', selector: { matchLabels: { 'app in (web)': 'x' } } }],
      targets: [TARGET],
    },
    message:
      "spec.sources[0].selector.matchLabels: Invalid value: every matchLabels key must be a valid label key (an optional DNS prefix and '/', then at most 63 alphanumeric, '-', '_' or '.' characters, starting and ending alphanumeric)",
  },
  {
    title: 'a selector label value no label can have',
    spec: {
      sources: [SOURCE],
      targets: [{ kind: 'Deployment', selector: { matchLabels: { app: 'web app' } } }],
    },
    message:
      "spec.targets[0].selector.matchLabels: Invalid value: every matchLabels value must be a valid label value (empty, or at most 63 alphanumeric, '-', '_' or '.' characters, starting and ending alphanumeric)",
  },
  {
    title: 'a selector expression key no label can have',
    spec: {
      sources: [SOURCE],
      targets: [
        {
          kind: 'Deployment',
          selector: { matchExpressions: [{ key: 'app in (web)', operator: 'Exists' }] },
        },
      ],
    },
    message:
      "spec.targets[0].selector.matchExpressions[0].key: Invalid value: \"app in (web)\": key must be a valid label key (an optional DNS prefix and '/', then at most 63 alphanumeric, '-', '_' or '.' characters, starting and ending alphanumeric)",
  },
  {
    title: 'a selector expression value no label can have',
    spec: {
      sources: [
        {
          kind: 'Secret',
          selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['a/b'] }] },
        },
      ],
      targets: [TARGET],
    },
    message:
      "spec.sources[0].selector.matchExpressions[0].values[0]: Invalid value: \"a/b\": each value must be a valid label value (empty, or at most 63 alphanumeric, '-', '_' or '.' characters, starting and ending alphanumeric)",
  },
  {
    title: 'no sources',
    spec: { sources: [], targets: [TARGET] },
    message: 'spec.sources: Invalid value: 0: spec.sources in body should have at least 1 items',
  },
];

/** The `message` of the Status the API server answered with (KubeJsonError holds the body). */
function statusMessage(error: KubeJsonError): string | undefined {
  const body = error.message.slice(error.message.indexOf('{'));
  return stringAt(JSON.parse(body) as unknown, ['message']);
}

describe('ReloadPolicy CRD validation (real kube-apiserver)', () => {
  it.each(REJECTIONS)('rejects $title', async ({ spec, message }) => {
    const error = await createPolicy(client, namespace, 'bad', spec).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(KubeJsonError);
    expect((error as KubeJsonError).status).toBe(422);
    expect(statusMessage(error as KubeJsonError)).toBe(
      `ReloadPolicy.kreload.io "bad" is invalid: ${message}`,
    );
  });

  it('accepts every field at once and fills the selector defaults', async () => {
    const created = await createPolicy(client, namespace, 'every-field', {
      sources: [
        { kind: 'ConfigMap', name: 'app-config' },
        { kind: 'Secret', selector: { matchLabels: { team: 'web' } } },
        {
          kind: 'SecretProviderClass',
          selector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] },
        },
      ],
      targets: [
        { kind: 'Deployment', name: 'web' },
        { kind: 'Deployment', selector: { matchLabels: { app: 'web' } } },
      ],
      strategy: 'annotations',
      syncDelay: '1m30s',
      pausePeriod: '0.5h',
      suspend: false,
    });
    expect(created.spec).toEqual({
      sources: [
        { kind: 'ConfigMap', name: 'app-config' },
        { kind: 'Secret', selector: { matchLabels: { team: 'web' }, matchExpressions: [] } },
        {
          kind: 'SecretProviderClass',
          selector: {
            matchLabels: {},
            matchExpressions: [{ key: 'tier', operator: 'Exists', values: [] }],
          },
        },
      ],
      targets: [
        { kind: 'Deployment', name: 'web' },
        { kind: 'Deployment', selector: { matchLabels: { app: 'web' }, matchExpressions: [] } },
      ],
      strategy: 'annotations',
      syncDelay: '1m30s',
      pausePeriod: '0.5h',
      suspend: false,
    });
  });

  it('accepts configRevisions on Deployments, StatefulSets and DaemonSets; fills the defaults', async () => {
    const created = await createPolicy(client, namespace, 'revisions', {
      sources: [SOURCE],
      targets: [TARGET, { kind: 'StatefulSet', name: 'db' }, { kind: 'DaemonSet', name: 'agent' }],
      configRevisions: { configMaps: true },
    });
    expect(created.spec).toMatchObject({ configRevisions: { configMaps: true, secrets: false } });
  });

  it('accepts strategy restart when every target is a Rollout, and 0 as a duration', async () => {
    const created = await createPolicy(client, namespace, 'restart-rollouts', {
      sources: [SOURCE],
      targets: [{ kind: 'Rollout', name: 'canary' }],
      strategy: 'restart',
      syncDelay: '0',
    });
    expect(created.spec).toMatchObject({ strategy: 'restart', syncDelay: '0' });
  });
});
