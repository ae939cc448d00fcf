// `kreload explain` for the create and delete cases (§5.4, --reload-on-create and
// --reload-on-delete), and GET /debug/explain against the real controller (ADR 0031): explain
// before the change, make it, and kreload must have done what explain predicted, for the rule
// explain named. The endpoint agrees with the CLI on the same workload, shows the create mark and
// the queued pass that only the controller has, and answers bad queries with a 4xx.
import { describe, expect, it } from 'vitest';
import { AUTO, CONFIGMAP_RELOAD, baselineAfterRoll } from '../harness/annotations.ts';
import {
  askController,
  comparable,
  explainJson,
  runExplain,
  type ExplainJson,
  type ExplainedSource,
} from '../harness/explain.ts';
import { waitForBaseline, waitForEnv, waitForRecord } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import {
  DELETE_MARKER_HASH,
  envVarName,
  sourceHash,
  sourceKey,
  type ConfigMapSpec,
} from '../harness/sources.ts';
import { APP, podSpec } from '../harness/workloads.ts';
import { configMap, envFrom, secret } from './reload-rules.table.ts';

const SECRET_VALUE = 'xc-explain-secret-value-4f1d';

/**
 * A debounce long enough to look at a pending pass between the change and its roll: the endpoint is
 * polled every 100 ms, the window is 4 s.
 */
const FLAGS = ['--reload-on-create', '--reload-on-delete', '--sync-delay=4s'];

const fixture = useKreload({
  name: 'explain-ctl',
  args: ([watched]) => [`--namespaces=${String(watched)}`, ...FLAGS, '--enable-debug-explain'],
});

/** The CLI with the controller's flags (the endpoint flag does not change a decision). */
function cli(target: string): Promise<ExplainJson> {
  return explainJson(fixture.cluster.kubeconfigPath, target, fixture.namespace, [
    '--',
    `--namespaces=${fixture.namespace}`,
    ...FLAGS,
  ]);
}

async function controller(query: Readonly<Record<string, string>>): Promise<ExplainJson> {
  const reply = await askController(fixture.kreload, { namespace: fixture.namespace, ...query });
  expect(reply.status, reply.body).toBe(200);
  expect(reply.contentType).toBe('application/json');
  return JSON.parse(reply.body) as ExplainJson;
}

function sourceOf(report: ExplainJson, source: ConfigMapSpec): ExplainedSource {
  const found = report.workload?.sources.find((s) => s.key === sourceKey(source));
  if (found === undefined) throw new Error(`no ${sourceKey(source)} in ${JSON.stringify(report)}`);
  return found;
}

describe('explain predicts create and delete (--reload-on-create, --reload-on-delete)', () => {
  it('a listed source that does not exist yet: its creation rolls (R8), as predicted', async () => {
    const { namespace, sources, workloads } = fixture;
    const source = configMap('xc-created-cfg');
    const ref = await workloads.create('Deployment', {
      namespace,
      name: 'xc-created',
      annotations: { [CONFIGMAP_RELOAD]: source.name },
      podSpec: podSpec({}),
    });
    await workloads.settledRevisions(ref, 1);
    const before = sourceOf(await cli('deployment/xc-created'), source);
    expect(before).toMatchObject({
      decision: { rule: 'reload-list' },
      verdict: 'missing',
      predicts: { create: 'roll' },
    });

    await sources.create(namespace, source);
    // Only the controller knows the create mark and the pass the debounce holds back.
    const pending = await pollUntil(
      async () => {
        const report = await controller({ kind: 'Deployment', name: 'xc-created' });
        return (report.workload?.facts.controller?.marks.length ?? 0) > 0 ? report : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, describe: 'the create mark in /debug/explain' },
    );
    expect(pending.config.kind).toBe('controller');
    expect(pending.assumptions).toEqual([]);
    expect(pending.workload?.facts.controller).toMatchObject({
      leading: true,
      marks: [{ kind: 'create', source: sourceKey(source) }],
      queue: { state: 'queued' },
    });
    expect(sourceOf(pending, source)).toMatchObject({
      verdict: 'pending-roll',
      stateRule: 'R8',
      because: 'reload-list',
    });

    const rolled = await waitForEnv(workloads, ref, {
      container: APP,
      name: envVarName(source),
      value: sourceHash(source),
    });
    expect(rolled.generation).toBe(2);
    expect((await workloads.settledRevisions(ref, 2)).revisions).toBe(2);
  });

  it('a tracked source: its deletion rolls to the delete marker (R6), as predicted', async () => {
    const { namespace, sources, workloads } = fixture;
    const source = configMap('xc-deleted-cfg');
    await sources.create(namespace, source);
    const ref = await workloads.create('Deployment', {
      namespace,
      name: 'xc-deleted',
      annotations: { [AUTO]: 'true' },
      podSpec: podSpec({ app: envFrom(source.name) }),
    });
    await waitForBaseline(workloads, ref, { [sourceKey(source)]: sourceHash(source) });
    const before = sourceOf(await cli('deployment/xc-deleted'), source);
    expect(before).toMatchObject({
      decision: { rule: 'auto' },
      verdict: 'rolls-on-change',
      predicts: { change: 'roll', delete: 'roll' },
    });

    await sources.delete(namespace, source);
    const rolled = await waitForEnv(workloads, ref, {
      container: APP,
      name: envVarName(source),
      value: DELETE_MARKER_HASH,
    });
    // The roll moved B (now empty) from the store into W, in the roll's own patch.
    expect(rolled.annotations).toMatchObject(baselineAfterRoll({}, true));
    await waitForRecord(workloads, ref, rolled, undefined);
    expect((await workloads.settledRevisions(ref, 2)).revisions).toBe(2);
  });
});

describe('GET /debug/explain on the running controller', () => {
  it('agrees with the CLI on the same workload, and returns no Secret bytes', async () => {
    const { namespace, sources, workloads } = fixture;
    const source = configMap('xc-agree-cfg');
    const credentials = secret('xc-agree-sec', { data: { password: SECRET_VALUE } });
    await sources.create(namespace, source);
    await sources.create(namespace, credentials);
    const ref = await workloads.create('Deployment', {
      namespace,
      name: 'xc-agree',
      annotations: { [AUTO]: 'true' },
      podSpec: podSpec({
        app: {
          envFrom: [
            { configMapRef: { name: source.name } },
            { secretRef: { name: credentials.name } },
          ],
        },
      }),
    });
    await waitForBaseline(workloads, ref, {
      [sourceKey(source)]: sourceHash(source),
      [sourceKey(credentials)]: sourceHash(credentials),
    });
    // kreload's own baseline write comes back as an event and queues a pass: wait until it ran.
    const fromController = await pollUntil(
      async () => {
        const report = await controller({ kind: 'deployment', name: 'xc-agree' });
        return report.workload?.facts.controller?.queue.state === 'idle' ? report : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 250, describe: 'no pass queued for xc-agree' },
    );
    const fromCli = await cli('deployment/xc-agree');
    expect(fromController.workload?.gate).toBe(fromCli.workload?.gate);
    expect(fromController.workload?.sources.map(comparable)).toEqual(
      fromCli.workload?.sources.map(comparable),
    );
    expect(sourceOf(fromController, source)).toMatchObject({
      verdict: 'rolls-on-change',
      currentHash: sourceHash(source),
    });

    expect(fromController.workload?.sources.map((s) => s.key)).toEqual([
      sourceKey(source),
      sourceKey(credentials),
    ]);

    const query = await controller({ kind: 'configmap', name: source.name });
    expect(query.source?.rolls.map((usage) => usage.name)).toEqual(['xc-agree']);

    // The CLI asks the same controller with --via-controller.
    const viaCli = await runExplain(fixture.cluster.kubeconfigPath, [
      'deployment/xc-agree',
      '-n',
      namespace,
      '-o',
      'json',
      `--via-controller=${fixture.kreload.url('/')}`,
    ]);
    expect(viaCli.code, viaCli.stderr).toBe(0);
    const viaReport = JSON.parse(viaCli.stdout) as ExplainJson;
    expect(viaReport.config.kind).toBe('controller');
    expect(viaReport.workload?.sources.map(comparable)).toEqual(
      fromController.workload?.sources.map(comparable),
    );

    for (const o of ['json', 'yaml', 'table']) {
      for (const target of [
        { kind: 'deployment', name: 'xc-agree' },
        { kind: 'secret', name: credentials.name },
      ]) {
        const reply = await askController(fixture.kreload, { namespace, ...target, o });
        expect(reply.status).toBe(200);
        expect(reply.body).not.toContain(SECRET_VALUE);
        expect(reply.body).not.toContain(Buffer.from(SECRET_VALUE).toString('base64'));
      }
    }
  });

  it.each([
    ['no name', { kind: 'Deployment' }, 400, 'missing parameter "name"'],
    ['an unknown kind', { kind: 'Pod', name: 'x' }, 400, 'unknown kind "Pod"'],
    ['a misspelt parameter', { kind: 'Deployment', nam: 'x' }, 400, 'unknown parameter "nam"'],
    ['a bad format', { kind: 'Deployment', name: 'xc-agree', o: 'xml' }, 400, 'o must be'],
    ['a missing workload', { kind: 'Deployment', name: 'nope' }, 404, 'not in the controller'],
  ])('%s → %s with a JSON error', async (_name, query, status, message) => {
    const reply = await askController(fixture.kreload, { namespace: fixture.namespace, ...query });
    expect(reply.status).toBe(status);
    expect(reply.contentType).toBe('application/json');
    expect((JSON.parse(reply.body) as { error: string }).error).toContain(message);
    // The controller keeps answering.
    expect((await fetch(fixture.kreload.url('/readyz'))).status).toBe(200);
  });
});
