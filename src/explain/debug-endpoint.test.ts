import type { FlapLimits, FlapStatus } from '../core/flap-breaker.ts';
import type { StartedRollout } from './explain-workload.ts';
import { BUILT_IN_KIND_TABLE } from '../rollout/kinds.ts';
import { dumpYaml, loadYaml } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { parseOptions } from '../config/parse-options.ts';
import { sourceKey, workloadKey } from '../core/keys.ts';
import type {
  SourceKey,
  SourceType,
  WorkloadKey,
  WorkloadKind,
  WorkloadView,
} from '../core/types.ts';
import { BASELINE, DEFAULT_ANNOTATION_KEYS as K, ROLLOUT_HALTED } from '../core/types.ts';
import { InMemorySources } from '../testing/in-memory-sources.ts';
import { InMemoryWorkloads } from '../testing/in-memory-workloads.ts';
import { aCreateMark, aDeleteMark } from '../testing/marks.ts';
import { aConfigMap, aContainer, aWorkload } from '../testing/builders.ts';
import { MarkStore } from '../watch/marks.ts';
import type { ReloadPolicyView } from '../core/reload-policy.ts';
import { aPolicy, policyStoreOver } from '../testing/policies.ts';
import type { ControllerExplainPorts } from './controller-explain.ts';
import {
  explainFromController,
  MAX_SOURCE_QUERY_WORKLOADS,
  queueStateOf,
} from './controller-explain.ts';
import { debugExplainReply } from './debug-endpoint.ts';
import type { ExplainReport, QueueState, SourceExplanation } from './model.ts';

const NS = 'shop';
const CFG = sourceKey('CONFIGMAP', 'cfg');
const HASH = 'a'.repeat(40);
const OTHER_HASH = 'b'.repeat(40);
const NOW = Date.parse('2026-06-01T12:00:00Z');
const API = workloadKey({ kind: 'Deployment', namespace: NS, name: 'api' });

/** The store's two methods the endpoint needs beyond WorkloadLookup. */
class Store extends InMemoryWorkloads {
  readonly #keys = new Set<WorkloadKey>();
  readonly unsynced = new Set<WorkloadKind>();

  override put(...args: Parameters<InMemoryWorkloads['put']>): void {
    super.put(...args);
    this.#keys.add(workloadKey(args[0].ref));
  }

  keysInNamespace(namespace: string): readonly WorkloadKey[] {
    return [...this.#keys].filter((key) => this.get(key)?.ref.namespace === namespace);
  }

  isSynced(kind: WorkloadKind): boolean {
    return !this.unsynced.has(kind);
  }
}

interface World {
  readonly flags?: readonly string[];
  /** Deployment shop/api, auto, envFrom cfg; W annotations added. */
  readonly annotations?: Readonly<Record<string, string>>;
  /** cfg in the cache, with its §5.4 times; undefined: absent. */
  readonly cfg?: { readonly hash: string; firstObserved?: number; lastChange?: number } | undefined;
  readonly relevantSince?: number;
  readonly marks?: readonly ReturnType<typeof aCreateMark | typeof aDeleteMark>[];
  readonly unhealthy?: SourceType;
  readonly unsynced?: WorkloadKind;
  readonly recreations?: ReadonlyMap<WorkloadKey, number>;
  readonly queue?: QueueState;
  readonly deployment?: boolean;
  /** ReloadPolicies in the controller's store (`--enable-reload-policies`). */
  readonly policies?: readonly ReloadPolicyView[];
  readonly labels?: Readonly<Record<string, string>>;
  /** The last rollout kreload started on shop/api (the rollout tracker). */
  readonly rollout?: StartedRollout;
  /** Other workloads of the namespace (halt markers). */
  readonly others?: readonly WorkloadView[];
  /** The controller's breakers. */
  readonly breakers?: ControllerExplainPorts['breakers'];
  /** Active-active mode. */
  readonly shard?: ControllerExplainPorts['shard'];
}

const BASELINED = { [K.auto]: 'true', [BASELINE]: JSON.stringify({ [CFG]: HASH }) };

async function portsOf(world: World): Promise<ControllerExplainPorts> {
  const sources = new InMemorySources();
  if (world.cfg !== undefined) {
    sources.put(
      aConfigMap(NS, 'cfg').withHash(world.cfg.hash).withUid('cfg-uid').build(),
      world.cfg,
    );
  }
  if (world.unhealthy !== undefined) sources.setHealthy(world.unhealthy, false);
  const workloads = new Store();
  if (world.unsynced !== undefined) workloads.unsynced.add(world.unsynced);
  const api = aWorkload('Deployment', NS, 'api')
    .withContainer(aContainer('app').withEnvFrom('configmap', 'cfg'))
    .withAnnotations(world.annotations ?? BASELINED)
    .build();
  const view = world.labels === undefined ? api : { ...api, labels: world.labels };
  if (world.deployment !== false) workloads.put(view, world.relevantSince);
  const policies =
    world.policies === undefined
      ? undefined
      : policyStoreOver({ sources: () => [], workloads: () => [view] });
  for (const policy of world.policies ?? []) policies?.upsert(policy);
  const marks = new MarkStore();
  for (const mark of world.marks ?? []) marks.add([API], mark);
  return {
    options: await parseOptions(world.flags ?? [], {}),
    kinds: BUILT_IN_KIND_TABLE,
    sources,
    workloads,
    namespaceSelected: () => true,
    marks,
    policies,
    recreationPendingSince: (key) => world.recreations?.get(key),
    queue: () => world.queue ?? { state: 'idle' },
    rollout: (key) => (key === API ? world.rollout : undefined),
    workloadsInNamespace: () => [view, ...(world.others ?? [])],
    leading: () => true,
    now: () => NOW,
    pod: 'kreload-0',
    breakers: world.breakers,
    shard: world.shard,
  };
}

async function ask(world: World, query: string) {
  const ports = await portsOf(world);
  return debugExplainReply(
    new URLSearchParams(query),
    BUILT_IN_KIND_TABLE,
    (target) => explainFromController(ports, target),
    (value) => dumpYaml(value),
  );
}

function cfgOf(body: string): SourceExplanation {
  const report = JSON.parse(body) as ExplainReport;
  const source = report.workload?.sources.find((candidate) => candidate.key === CFG);
  if (source === undefined) throw new Error(`no ${CFG} in ${body}`);
  return source;
}

const DEPLOYMENT = `kind=Deployment&namespace=${NS}&name=api`;

describe('GET /debug/explain: bad queries are 4xx with a JSON error', () => {
  it.each([
    ['no parameter', '', 400, 'missing parameter "kind", "namespace", "name"'],
    ['no name', `kind=Deployment&namespace=${NS}`, 400, 'missing parameter "name"'],
    ['an empty namespace', 'kind=Deployment&namespace=&name=api', 400, '"namespace"'],
    ['an unknown kind', `kind=Pod&namespace=${NS}&name=api`, 400, 'unknown kind "Pod"'],
    ['a misspelt parameter', `kind=Deployment&nmespace=${NS}&name=api`, 400, '"nmespace"'],
    ['a repeated parameter', `${DEPLOYMENT}&name=web`, 400, '"name" given more than once'],
    ['an unknown format', `${DEPLOYMENT}&o=xml`, 400, 'o must be one of table, wide, json, yaml'],
    [
      'a workload not in the cache',
      `kind=Deployment&namespace=${NS}&name=web`,
      404,
      'not in the controller',
    ],
    ['a kind not watched', `kind=Rollout&namespace=${NS}&name=api`, 404, 'does not watch Rollout'],
  ])('%s → %s', async (_name, query, status, message) => {
    const reply = await ask({}, query);
    expect(reply.status).toBe(status);
    expect(reply.contentType).toBe('application/json');
    expect((JSON.parse(reply.body) as { error: string }).error).toContain(message);
  });

  it('answers 503 while the kind is not synced', async () => {
    const reply = await ask({ unsynced: 'Deployment' }, DEPLOYMENT);
    expect(reply.status).toBe(503);
    expect(reply.body).toContain('not synced');
  });

  it('names a pending Job recreation when the Job is gone', async () => {
    const job = workloadKey({ kind: 'Job', namespace: NS, name: 'migrate' });
    const since = Date.parse('2026-06-01T11:59:00Z');
    const reply = await ask(
      { recreations: new Map([[job, since]]) },
      `kind=job&namespace=${NS}&name=migrate`,
    );
    expect(reply.status).toBe(404);
    expect(reply.body).toContain('recreation is pending since 2026-06-01T11:59:00.000Z');
  });
});

describe('GET /debug/explain: the controller answers from its caches', () => {
  it.each<{
    name: string;
    world: World;
    verdict: SourceExplanation['verdict'];
    because: SourceExplanation['because'];
    stateRule?: string;
  }>([
    {
      name: 'up to date',
      world: { cfg: { hash: HASH } },
      verdict: 'rolls-on-change',
      because: 'auto',
      stateRule: 'R4',
    },
    {
      name: 'changed since the baseline',
      world: { cfg: { hash: OTHER_HASH } },
      verdict: 'pending-roll',
      because: 'auto',
      stateRule: 'R5',
    },
    {
      // The CLI assumes R7 never holds and says first-sight (R9); the controller saw the change.
      name: 'changed after tracking began, no baseline yet (R7)',
      world: {
        annotations: { [K.auto]: 'true' },
        cfg: { hash: HASH, firstObserved: NOW - 60_000, lastChange: NOW - 1_000 },
        relevantSince: NOW - 60_000,
      },
      verdict: 'pending-roll',
      because: 'auto',
      stateRule: 'R7',
    },
    {
      name: 'first sight without a change (R9)',
      world: {
        annotations: { [K.auto]: 'true' },
        cfg: { hash: HASH, firstObserved: NOW - 60_000 },
        relevantSince: NOW - 60_000,
      },
      verdict: 'first-sight',
      because: 'auto',
      stateRule: 'R9',
    },
    {
      name: 'a pending create mark, --reload-on-create (R8)',
      world: {
        flags: ['--reload-on-create'],
        annotations: { [K.auto]: 'true' },
        cfg: { hash: HASH },
        marks: [aCreateMark(CFG, 'cfg-uid', NOW - 500)],
      },
      verdict: 'pending-roll',
      because: 'auto',
      stateRule: 'R8',
    },
    {
      name: 'a pending delete mark, --reload-on-delete (R6)',
      world: { flags: ['--reload-on-delete'], marks: [aDeleteMark(CFG, 'cfg-uid', {}, NOW - 500)] },
      // The baseline differs from the delete marker: R5 before R6.
      verdict: 'pending-roll',
      because: 'auto',
      stateRule: 'R5',
    },
    {
      name: 'a pending delete mark, no baseline, --reload-on-delete (R6)',
      world: {
        flags: ['--reload-on-delete'],
        annotations: { [K.auto]: 'true' },
        marks: [aDeleteMark(CFG, 'cfg-uid', {}, NOW - 500)],
      },
      verdict: 'pending-roll',
      because: 'auto',
      stateRule: 'R6',
    },
    {
      name: 'deleted, no --reload-on-delete',
      world: { marks: [aDeleteMark(CFG, 'cfg-uid', {}, NOW - 500)] },
      verdict: 'missing',
      because: 'auto',
      stateRule: 'R1',
    },
    {
      name: 'the ConfigMap cache is unhealthy',
      world: { cfg: { hash: HASH }, unhealthy: 'CONFIGMAP' },
      verdict: 'cannot-tell',
      because: 'source-cache-unhealthy',
      stateRule: 'R1',
    },
    {
      name: 'ConfigMaps ignored',
      world: { flags: ['--resources-to-ignore=configmaps'], cfg: { hash: HASH } },
      verdict: 'no-roll',
      because: 'resource-type-ignored',
      stateRule: 'R1',
    },
  ])('$name → $verdict because $because', async ({ world, verdict, because, stateRule }) => {
    const reply = await ask(world, DEPLOYMENT);
    expect(reply.status).toBe(200);
    expect(reply.contentType).toBe('application/json');
    const cfg = cfgOf(reply.body);
    expect({ verdict: cfg.verdict, because: cfg.because, stateRule: cfg.stateRule }).toEqual({
      verdict,
      because,
      stateRule,
    });
  });

  it('says it is the controller, assumes nothing, and shows marks, queue and env references', async () => {
    const reply = await ask(
      {
        flags: ['--reload-on-create'],
        cfg: { hash: HASH },
        marks: [aCreateMark(CFG, 'cfg-uid', NOW - 500)],
        queue: { state: 'queued', dueAt: '2026-06-01T12:00:02.000Z' },
      },
      DEPLOYMENT,
    );
    const report = JSON.parse(reply.body) as ExplainReport;
    expect(report.config).toEqual({ kind: 'controller', pod: 'kreload-0' });
    expect(report.assumptions).toEqual([]);
    expect(report.workload?.facts.controller).toEqual({
      leading: true,
      marks: [{ kind: 'create', source: CFG, at: '2026-06-01T11:59:59.500Z' }],
      queue: { state: 'queued', dueAt: '2026-06-01T12:00:02.000Z' },
    });
    expect(cfgOf(reply.body).references).toEqual([{ container: 'app', init: false, via: 'env' }]);
  });

  it('shows the last rollout kreload started, by the generation its PATCH produced', async () => {
    const reply = await ask(
      {
        cfg: { hash: HASH },
        rollout: {
          generation: 7,
          startedAt: NOW - 90_000,
          health: {
            state: 'failed',
            reason: 'ProgressDeadlineExceeded',
            detail: 'progress deadline passed with 1 of 3 replicas updated, 3 available',
          },
          ended: { at: NOW - 30_000, result: 'failed' },
        },
      },
      DEPLOYMENT,
    );
    const report = JSON.parse(reply.body) as ExplainReport;
    expect(report.workload?.facts.rollout).toEqual({
      of: 'kreload',
      generation: 7,
      state: 'failed',
      reason: 'ProgressDeadlineExceeded',
      detail: 'progress deadline passed with 1 of 3 replicas updated, 3 available',
      startedAt: '2026-06-01T11:58:30.000Z',
      endedAt: '2026-06-01T11:59:30.000Z',
      result: 'failed',
    });
    const table = await ask(
      {
        cfg: { hash: HASH },
        rollout: { generation: 7, startedAt: NOW, health: undefined, ended: undefined },
      },
      `${DEPLOYMENT}&o=table`,
    );
    expect(table.body).toContain('rollout kreload started (generation 7): unknown');
  });

  it("holds by the breaker under the workload's own limits (kreload.io/flap-max-changes)", async () => {
    const open: FlapStatus = {
      open: true,
      openedAt: NOW - 10_000,
      closesAt: NOW + 110_000,
      changesInPeriod: 4,
      episodeChanges: 4,
    };
    // Open only under the workload's limit of 3; the flags leave the breaker off.
    const breakers = {
      status: (_namespace: string, _source: SourceKey, limits?: FlapLimits): FlapStatus =>
        limits?.maxChanges === 3 ? open : { open: false },
    };
    const annotations = { ...BASELINED, 'kreload.io/flap-max-changes': '3' };
    const world: World = { annotations, cfg: { hash: OTHER_HASH }, breakers };
    const table = (await ask(world, `${DEPLOYMENT}&o=table`)).body;
    expect(table).toContain('held (flapping)');
  });

  it('names the halted change, the failed workload and the resume command (--rollout-waves)', async () => {
    const marker = {
      source: `configmap/${NS}/cfg`,
      hash: OTHER_HASH,
      at: '2026-06-01T11:50:00Z',
      reason: 'ProgressDeadlineExceeded',
    };
    const canary = aWorkload('Deployment', NS, 'canary')
      .withAnnotation(ROLLOUT_HALTED, JSON.stringify(marker))
      .build();
    const world: World = {
      flags: ['--rollout-waves'],
      cfg: { hash: OTHER_HASH },
      others: [canary],
    };
    const report = JSON.parse((await ask(world, DEPLOYMENT)).body) as ExplainReport;
    expect(report.workload?.facts.halts).toEqual([
      {
        ...marker,
        by: { kind: 'Deployment', namespace: NS, name: 'canary' },
        self: false,
        resume: `kubectl annotate -n ${NS} deployment/canary kreload.io/rollout-halted-`,
      },
    ]);
    const table = (await ask(world, `${DEPLOYMENT}&o=table`)).body;
    expect(table).toContain(
      `held: the change of configmap/${NS}/cfg (hash ${OTHER_HASH.slice(0, 12)}) is halted by Deployment ${NS}/canary (ProgressDeadlineExceeded)`,
    );
    expect(table).toContain(
      `resume: kubectl annotate -n ${NS} deployment/canary kreload.io/rollout-halted-`,
    );
    // The change the marker names is not the one due here (another hash): no hold.
    const other = await ask({ ...world, cfg: { hash: HASH } }, DEPLOYMENT);
    expect((JSON.parse(other.body) as ExplainReport).workload?.facts.halts).toBeUndefined();
  });

  it('says when the rollout was found in progress at start rather than seen being started', async () => {
    const adopted = {
      generation: 7,
      startedAt: NOW,
      adopted: true,
      health: { state: 'progressing', detail: '1 of 3 replicas updated' },
      ended: undefined,
    } as const;
    const reply = await ask({ cfg: { hash: HASH }, rollout: adopted }, DEPLOYMENT);
    expect((JSON.parse(reply.body) as ExplainReport).workload?.facts.rollout).toMatchObject({
      of: 'kreload',
      state: 'progressing',
      adopted: true,
      startedAt: '2026-06-01T12:00:00.000Z',
    });
    const table = await ask({ cfg: { hash: HASH }, rollout: adopted }, `${DEPLOYMENT}&o=table`);
    expect(table.body).toContain(
      'progressing: 1 of 3 replicas updated; in progress when this controller started, followed since 2026-06-01T12:00:00.000Z',
    );
  });

  it('active-active: names the bucket of the namespace, its holder and whether this replica writes it', async () => {
    const shard = (namespace: string) => ({
      bucket: namespace.length,
      holder: 'kreload-2',
      assigned: 'kreload-2',
      owned: false,
    });
    const reply = await ask({ cfg: { hash: HASH }, shard }, DEPLOYMENT);
    const report = JSON.parse(reply.body) as ExplainReport;
    expect(report.workload?.facts.controller?.shard).toEqual(shard(NS));
    const table = await ask({ cfg: { hash: HASH }, shard }, `${DEPLOYMENT}&o=table`);
    expect(table.body).toContain(
      `controller: namespace bucket ${String(NS.length)} held by kreload-2, assigned to kreload-2; this replica does not write it; no pass due`,
    );
  });

  it('explains a source: the workloads a change rolls', async () => {
    const reply = await ask({ cfg: { hash: HASH } }, `kind=cm&namespace=${NS}&name=cfg`);
    const report = JSON.parse(reply.body) as ExplainReport;
    expect(report.source?.rolls.map((usage) => `${usage.kind}/${usage.name}`)).toEqual([
      'Deployment/api',
    ]);
    expect(report.source?.doesNotRoll).toEqual([]);
  });

  it('renders YAML and the table on request', async () => {
    const yaml = await ask({ cfg: { hash: HASH } }, `${DEPLOYMENT}&o=yaml`);
    expect(yaml.contentType).toBe('application/yaml');
    expect(loadYaml(yaml.body)).toEqual(
      JSON.parse((await ask({ cfg: { hash: HASH } }, DEPLOYMENT)).body),
    );
    const table = await ask({ cfg: { hash: HASH } }, `${DEPLOYMENT}&o=table`);
    expect(table.contentType).toBe('text/plain; charset=utf-8');
    expect(table.body).toContain('answer of the running kreload (pod kreload-0)');
    expect(table.body).toContain('controller: leader; no pass due');
    expect(table.body).not.toContain('explain assumes');
  });
});

describe('GET /debug/explain: ReloadPolicy bindings from the controller store', () => {
  const UNANNOTATED = { [BASELINE]: JSON.stringify({ [CFG]: HASH }) };
  const cfgPolicy = (name: string, extra: Partial<ReloadPolicyView> = {}) =>
    aPolicy(NS, name, {
      sources: [{ kind: 'CONFIGMAP', name: 'cfg' }],
      targets: [{ kind: 'Deployment', name: 'api' }],
      ...extra,
    });
  const bySelector = {
    kind: 'Deployment',
    selector: { matchLabels: { app: 'api' }, matchExpressions: [] },
  } as const;

  it.each<{
    name: string;
    policies: readonly ReloadPolicyView[];
    labels?: Record<string, string>;
    verdict: string;
    because: string;
    policyNames: readonly string[] | undefined;
  }>([
    {
      name: 'by name',
      policies: [cfgPolicy('p1')],
      verdict: 'rolls-on-change',
      because: 'policy',
      policyNames: ['p1'],
    },
    {
      name: 'by selector',
      policies: [cfgPolicy('p1', { targets: [bySelector] })],
      labels: { app: 'api' },
      verdict: 'rolls-on-change',
      because: 'policy',
      policyNames: ['p1'],
    },
    {
      name: 'selector not matching',
      policies: [cfgPolicy('p1', { targets: [bySelector] })],
      labels: { app: 'web' },
      verdict: 'no-roll',
      because: 'not-annotated',
      policyNames: undefined,
    },
    {
      name: 'suspended',
      policies: [cfgPolicy('p1', { suspend: true })],
      verdict: 'no-roll',
      because: 'not-annotated',
      policyNames: undefined,
    },
  ])('$name → $verdict because $because', async (c) => {
    const world = {
      cfg: { hash: HASH },
      annotations: UNANNOTATED,
      policies: c.policies,
      ...(c.labels === undefined ? {} : { labels: c.labels }),
    };
    const source = cfgOf((await ask(world, DEPLOYMENT)).body);
    expect([source.verdict, source.because, source.policies]).toEqual([
      c.verdict,
      c.because,
      c.policyNames,
    ]);
  });

  it('shows the settings the oldest policy wins and the conflict of the other', async () => {
    const older = cfgPolicy('older', {
      creationTimestamp: '2026-11-01T00:00:00Z',
      strategy: 'annotations',
      syncDelayMs: 5000,
    });
    const newer = cfgPolicy('newer', { strategy: 'env-vars' });
    const world = { cfg: { hash: HASH }, annotations: UNANNOTATED, policies: [newer, older] };
    const report = JSON.parse((await ask(world, DEPLOYMENT)).body) as ExplainReport;
    expect(report.workload?.facts.strategy).toBe('annotations');
    expect(report.workload?.facts.policy).toEqual({
      state: 'bound',
      policies: ['older', 'newer'],
      strategy: { value: 'annotations', policy: 'older' },
      syncDelayMs: 5000,
      conflicts: [
        {
          policy: 'newer',
          field: 'strategy',
          message: 'strategy env-vars is not applied to Deployment api: policy older sets it',
        },
      ],
    });
    const table = (await ask(world, `${DEPLOYMENT}&o=table`)).body;
    expect(table).toContain('LIST policy older, newer');
    expect(table).toContain(
      'bound by ReloadPolicy older, newer: strategy annotations from older, syncDelay 5000ms',
    );
    expect(table).toContain('policy conflict (newer): strategy env-vars is not applied');
  });

  it('names the configRevisions a policy gives (ADR 0038)', async () => {
    const pinning = cfgPolicy('pin', { configRevisions: { configMaps: true, secrets: true } });
    const world = { cfg: { hash: HASH }, annotations: UNANNOTATED, policies: [pinning] };
    const report = JSON.parse((await ask(world, DEPLOYMENT)).body) as ExplainReport;
    expect(report.workload?.facts.policy).toMatchObject({
      state: 'bound',
      configRevisions: 'configMaps+secrets',
    });
    const table = (await ask(world, `${DEPLOYMENT}&o=table`)).body;
    expect(table).toContain('bound by ReloadPolicy pin: configRevisions configMaps+secrets');
  });

  it('lists a policy-bound Deployment among the workloads a source change rolls', async () => {
    const world = { cfg: { hash: HASH }, annotations: UNANNOTATED, policies: [cfgPolicy('p1')] };
    const reply = await ask(world, `kind=cm&namespace=${NS}&name=cfg`);
    const report = JSON.parse(reply.body) as ExplainReport;
    expect(report.source?.rolls.map((usage) => [usage.name, usage.source.because])).toEqual([
      ['api', 'policy'],
    ]);
  });
});

describe('queueStateOf', () => {
  const key = API;
  it.each<[string, readonly SourceKey[] | readonly WorkloadKey[], number | undefined, QueueState]>([
    ['idle', [], undefined, { state: 'idle' }],
    ['queued', [], NOW, { state: 'queued', dueAt: '2026-06-01T12:00:00.000Z' }],
    ['in flight', [key], NOW, { state: 'in-flight' }],
  ])('%s', (_name, inFlight, dueAt, expected) => {
    const queue = {
      inFlight: inFlight as readonly WorkloadKey[],
      pendingEntry: () => (dueAt === undefined ? undefined : { dueAt }),
    };
    expect(queueStateOf(queue, key)).toEqual(expected);
  });
});

describe('GET /debug/explain for a source in a large namespace', () => {
  /** `api` (which uses cfg) plus `count` Deployments that use another ConfigMap. */
  async function crowded(count: number, using: number) {
    const ports = await portsOf({ cfg: { hash: HASH } });
    const store = ports.workloads as Store;
    for (let i = 0; i < count; i += 1) {
      const uses = i < using ? 'cfg' : 'other';
      store.put(
        aWorkload('Deployment', NS, `web-${String(i)}`)
          .withContainer(aContainer('app').withEnvFrom('configmap', uses))
          .withAnnotations({ [K.auto]: 'true' })
          .build(),
      );
    }
    let explained = 0;
    const counted: ControllerExplainPorts = {
      ...ports,
      queue: () => {
        explained += 1;
        return { state: 'idle' };
      },
    };
    return { ports: counted, explained: () => explained };
  }

  it('explains only the workloads that may use it, not every workload of the namespace', async () => {
    const world = await crowded(2000, 0);
    const reply = await debugExplainReply(
      new URLSearchParams(`kind=ConfigMap&namespace=${NS}&name=cfg`),
      BUILT_IN_KIND_TABLE,
      (target) => explainFromController(world.ports, target),
      (value) => dumpYaml(value),
    );
    const report = JSON.parse(reply.body) as ExplainReport;
    expect(report.source?.rolls.map((usage) => usage.name)).toEqual(['api']);
    expect(world.explained()).toBe(1);
  });

  it('explains a bounded number of users, counts the rest, and yields meanwhile', async () => {
    const world = await crowded(500, 500);
    let otherWorkRan = false;
    setImmediate(() => {
      otherWorkRan = true;
    });
    const reply = await debugExplainReply(
      new URLSearchParams(`kind=ConfigMap&namespace=${NS}&name=cfg&o=table`),
      BUILT_IN_KIND_TABLE,
      (target) => explainFromController(world.ports, target),
      (value) => dumpYaml(value),
    );
    expect(otherWorkRan).toBe(true);
    expect(world.explained()).toBe(MAX_SOURCE_QUERY_WORKLOADS);
    expect(reply.body).toContain(
      `${String(501 - MAX_SOURCE_QUERY_WORKLOADS)} more workloads may use it and were not explained here`,
    );
  });
});
