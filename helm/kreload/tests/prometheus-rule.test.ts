// The chart's PrometheusRule, checked by Prometheus's own rule tester: `promtool test rules` runs
// every alert on fixture series shaped as the chart's ServiceMonitor and PodMonitor produce them
// (job from app.kubernetes.io/instance, namespace, pod, endpoint), beside the series of another
// kreload release that must not fire. promtool is built from the Go module proxy by
// scripts/promtool.sh on first use.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { dump } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HELM_BUILD_TIMEOUT_MS,
  type KubeObject,
  type Rendered,
  isRecord,
  locateHelm,
  parseYaml,
  render,
  renderNotes,
  repoRoot,
} from './chart-harness.ts';

const run = promisify(execFile);
const MONITORING = ['monitoring.coreos.com/v1'];

interface Release {
  name: string;
  namespace: string;
}

/** A series with the target labels a monitor gives it, for promtool's input_series. */
interface Series {
  metric: string;
  labels?: Record<string, string>;
  values: string;
  /** Another release's series (same metric, another job) unless false. */
  own?: boolean;
  pod?: string;
  endpoint?: string;
}

interface ExpectedAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** One promtool test group: series, then the alerts firing at each evaluation time. */
interface Case {
  name: string;
  series: readonly Series[];
  alerts: readonly { alert: string; at: string; firing: readonly ExpectedAlert[] }[];
}

const OTHER_JOB = 'other-kreload';

function seriesText(release: Release, series: Series): string {
  const job = series.own === false ? OTHER_JOB : release.name;
  const labels = {
    job,
    namespace: release.namespace,
    pod: series.pod ?? `${release.name}-a`,
    endpoint: series.endpoint ?? 'http',
    ...series.labels,
  };
  const text = Object.entries(labels)
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
    .join(', ');
  return `${series.metric}{${text}}`;
}

/** Every alert the chart renders, each shown firing and quiet on series a monitor scrapes. */
function cases(release: Release): Case[] {
  const own = { job: release.name, namespace: release.namespace };
  const pod = `${release.name}-a`;
  return [
    {
      name: 'KreloadDown: no target up for 5 minutes; another release being up does not help',
      series: [
        { metric: 'up', values: '1x4 0x20' },
        { metric: 'up', values: '1x25', own: false },
      ],
      alerts: [
        { alert: 'KreloadDown', at: '4m', firing: [] },
        { alert: 'KreloadDown', at: '8m', firing: [] },
        {
          alert: 'KreloadDown',
          at: '12m',
          firing: [
            {
              labels: { ...own, severity: 'critical' },
              annotations: {
                summary:
                  'No kreload replica is being scraped: ConfigMap and Secret changes are not rolled out.',
                description: `No target of job ${release.name} has been up for 5 minutes. Check the pods and their /readyz.`,
              },
            },
          ],
        },
      ],
    },
    {
      name: 'KreloadReloadFailed: a failed roll, counted once per pod even when both monitors scrape it',
      series: [
        {
          metric: 'reloader_reload_executed_total',
          labels: { success: 'false' },
          values: '0 0 1x20',
        },
        {
          metric: 'reloader_reload_executed_total',
          labels: { success: 'false' },
          endpoint: 'pod-http',
          values: '0 0 1x20',
        },
        { metric: 'reloader_reload_executed_total', labels: { success: 'true' }, values: '0+5x22' },
        {
          metric: 'reloader_reload_executed_total',
          labels: { success: 'false' },
          values: '0+1x22',
          own: false,
        },
      ],
      alerts: [
        { alert: 'KreloadReloadFailed', at: '1m', firing: [] },
        {
          alert: 'KreloadReloadFailed',
          at: '5m',
          firing: [
            {
              labels: { ...own, pod, severity: 'warning' },
              annotations: {
                summary: 'kreload could not roll a workload.',
                description: `2 roll(s) failed in the last 15 minutes on ${pod}. kubectl get events -A --field-selector reason=ReloadFail says which workloads and why.`,
              },
            },
          ],
        },
        { alert: 'KreloadReloadFailed', at: '20m', firing: [] },
      ],
    },
    {
      name: 'KreloadRolloutFailed: a failed rollout, per kind; complete ones do not count',
      series: [
        {
          metric: 'kreload_rollout_duration_seconds_count',
          labels: { kind: 'Deployment', result: 'failed' },
          values: '0 0 0 1x20',
        },
        {
          metric: 'kreload_rollout_duration_seconds_count',
          labels: { kind: 'StatefulSet', result: 'complete' },
          values: '0+1x22',
        },
      ],
      alerts: [
        { alert: 'KreloadRolloutFailed', at: '2m', firing: [] },
        {
          alert: 'KreloadRolloutFailed',
          at: '6m',
          firing: [
            {
              labels: { ...own, kind: 'Deployment', severity: 'warning' },
              annotations: {
                summary: 'A rollout kreload started failed.',
                description:
                  '1 Deployment rollout(s) started by kreload failed in the last 15 minutes (progress deadline exceeded or Degraded). kubectl get events -A --field-selector reason=RolloutFailed names them.',
              },
            },
          ],
        },
      ],
    },
    {
      name: 'KreloadRolloutsHalted: rollouts in progress for 30 minutes while none ends',
      series: [{ metric: 'kreload_rollouts_in_progress', values: '0 2x60' }],
      alerts: [
        { alert: 'KreloadRolloutsHalted', at: '25m', firing: [] },
        {
          alert: 'KreloadRolloutsHalted',
          at: '40m',
          firing: [
            {
              labels: { ...own, severity: 'warning' },
              annotations: {
                summary: 'Rollouts kreload started have stopped moving.',
                description:
                  '2 rollout(s) kreload started have been in progress for over 30 minutes while none ended; a paused Deployment or a StatefulSet partition also holds one. kubectl kreload explain shows the last rollout of a workload.',
              },
            },
          ],
        },
      ],
    },
    {
      name: 'KreloadRolloutsHalted: rollouts always in progress but ending is not halted',
      series: [
        { metric: 'kreload_rollouts_in_progress', values: '0 2x60' },
        {
          metric: 'kreload_rollout_duration_seconds_count',
          labels: { kind: 'Deployment', result: 'complete' },
          values: '0+1x60',
        },
      ],
      alerts: [{ alert: 'KreloadRolloutsHalted', at: '45m', firing: [] }],
    },
    {
      name: 'KreloadWatchErrors: list or watch failures for 10 minutes',
      series: [
        { metric: 'reloader_errors_total', labels: { type: 'watch_error' }, values: '0+1x40' },
        { metric: 'reloader_errors_total', labels: { type: 'webhook_error' }, values: '0+9x40' },
        {
          metric: 'reloader_errors_total',
          labels: { type: 'watch_error' },
          values: '0+9x40',
          own: false,
        },
      ],
      alerts: [
        { alert: 'KreloadWatchErrors', at: '12m', firing: [] },
        {
          alert: 'KreloadWatchErrors',
          at: '25m',
          firing: [
            {
              labels: { ...own, pod, severity: 'warning' },
              annotations: {
                summary: "kreload's list or watch calls keep failing.",
                description: `10 list or watch calls failed on ${pod} in 10 minutes; changes to the sources it watches may go unseen. Check RBAC, the API server and /readyz.`,
              },
            },
          ],
        },
      ],
    },
    {
      name: 'KreloadWatchForbidden: a watch answered 403 (its namespace label is the watched one)',
      series: [
        {
          metric: 'reloader_watch_status',
          labels: { namespace: 'team-a', resource_type: 'secrets', status: 'forbidden' },
          values: '1x30',
        },
        {
          metric: 'reloader_watch_status',
          labels: { namespace: 'team-a', resource_type: 'configmaps', status: 'ok' },
          values: '1x30',
        },
        {
          metric: 'reloader_watch_status',
          labels: { namespace: 'team-b', resource_type: 'secrets', status: 'forbidden' },
          values: '1x30',
          own: false,
        },
      ],
      alerts: [
        { alert: 'KreloadWatchForbidden', at: '5m', firing: [] },
        {
          alert: 'KreloadWatchForbidden',
          at: '15m',
          firing: [
            {
              labels: {
                job: release.name,
                namespace: 'team-a',
                resource_type: 'secrets',
                severity: 'warning',
              },
              annotations: {
                summary: 'kreload may not read a kind it watches.',
                description:
                  'The secrets watch in namespace "team-a" (empty: cluster-wide) is answered 403: changes there are not rolled out. Grant the RBAC or stop watching it.',
              },
            },
          ],
        },
      ],
    },
    {
      name: 'KreloadLeaderAbsent: replicas up, none leading for 2 minutes',
      series: [
        { metric: 'reloader_leader', pod: `${release.name}-a`, values: '1 1 0x10' },
        { metric: 'reloader_leader', pod: `${release.name}-b`, values: '0x12' },
        { metric: 'reloader_leader', values: '1x12', own: false },
      ],
      alerts: [
        { alert: 'KreloadLeaderAbsent', at: '3m', firing: [] },
        {
          alert: 'KreloadLeaderAbsent',
          at: '6m',
          firing: [
            {
              labels: { ...own, severity: 'critical' },
              annotations: {
                summary: 'No kreload replica holds the Lease.',
                description: `Replicas of job ${release.name} are up but none has led for 2 minutes: nothing is rolled. Check the Lease and the pods' logs.`,
              },
            },
          ],
        },
      ],
    },
    {
      name: 'KreloadSplitBrain: two pods leading; one pod seen by both monitors is not two',
      series: [
        { metric: 'reloader_leader', pod: `${release.name}-a`, values: '1x12' },
        {
          metric: 'reloader_leader',
          pod: `${release.name}-a`,
          endpoint: 'pod-http',
          values: '1x12',
        },
        { metric: 'reloader_leader', pod: `${release.name}-b`, values: '0x4 1x8' },
      ],
      alerts: [
        { alert: 'KreloadSplitBrain', at: '4m', firing: [] },
        {
          alert: 'KreloadSplitBrain',
          at: '8m',
          firing: [
            {
              labels: { ...own, severity: 'warning' },
              annotations: {
                summary: 'More than one kreload replica reports leadership.',
                description: `2 replicas of job ${release.name} report reloader_leader 1.`,
              },
            },
          ],
        },
      ],
    },
  ];
}

function promtoolTests(release: Release): string {
  return dump({
    rule_files: ['rules.yaml'],
    evaluation_interval: '1m',
    tests: cases(release).map((testCase) => ({
      name: testCase.name,
      interval: '1m',
      input_series: testCase.series.map((series) => ({
        series: seriesText(release, series),
        values: series.values,
      })),
      alert_rule_test: testCase.alerts.map(({ alert, at, firing }) => ({
        eval_time: at,
        alertname: alert,
        exp_alerts: firing.map((expected) => ({
          exp_labels: expected.labels,
          exp_annotations: expected.annotations,
        })),
      })),
    })),
  });
}

async function locatePromtool(): Promise<string> {
  const { stdout } = await run('bash', [join(repoRoot, 'scripts', 'promtool.sh')], {
    maxBuffer: 16 * 1024 * 1024,
  });
  const path = stdout.trim().split('\n').at(-1);
  if (!path) throw new Error('scripts/promtool.sh printed no path');
  return path;
}

interface PrometheusRule extends KubeObject {
  spec: { groups: { name: string; rules: Record<string, unknown>[] }[] };
}

function prometheusRule(rendered: Rendered): PrometheusRule {
  const rules = rendered.objects.filter((object) => object.kind === 'PrometheusRule');
  const [only, ...others] = rules;
  if (only === undefined || others.length > 0) {
    throw new Error(`expected one PrometheusRule, rendered ${String(rules.length)}`);
  }
  if (!isRecord((only as { spec?: unknown }).spec)) throw new Error('PrometheusRule has no spec');
  return only as PrometheusRule;
}

const alertNames = (rule: PrometheusRule): unknown[] =>
  rule.spec.groups.flatMap((group) => group.rules.map((entry) => entry.alert));

const ALL_ALERTS = [
  'KreloadDown',
  'KreloadReloadFailed',
  'KreloadRolloutFailed',
  'KreloadRolloutsHalted',
  'KreloadWatchErrors',
  'KreloadWatchForbidden',
  'KreloadLeaderAbsent',
  'KreloadSplitBrain',
];

const RELEASES: readonly Release[] = [
  { name: 'kreload', namespace: 'kreload-system' },
  { name: 'ops-reloader', namespace: 'platform' },
];

describe('PrometheusRule', () => {
  let helm: string;
  let promtool: string;
  let dir: string;

  beforeAll(async () => {
    [helm, promtool] = await Promise.all([locateHelm(), locatePromtool()]);
    dir = await mkdtemp(join(tmpdir(), 'kreload-rules-'));
  }, HELM_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const enabled = (release: Release, values: Record<string, unknown> = {}): Promise<Rendered> =>
    render(helm, {
      release: release.name,
      namespace: release.namespace,
      apiVersions: MONITORING,
      values: {
        reloader: {
          serviceMonitor: { enabled: true },
          podMonitor: { enabled: true },
          prometheusRule: { enabled: true, ...values },
        },
      },
    });

  it.each(RELEASES)(
    'release $name in $namespace: promtool test rules passes on fixture series',
    async (release) => {
      const rule = prometheusRule(await enabled(release));
      expect(alertNames(rule)).toEqual(ALL_ALERTS);
      const caseDir = await mkdtemp(join(dir, `${release.name}-`));
      await writeFile(join(caseDir, 'rules.yaml'), dump({ groups: rule.spec.groups }));
      await writeFile(join(caseDir, 'tests.yaml'), promtoolTests(release));
      const check = await run(promtool, ['check', 'rules', join(caseDir, 'rules.yaml')]);
      expect(check.stdout).toContain(`SUCCESS: ${String(ALL_ALERTS.length)} rules found`);
      const result = await run(promtool, ['test', 'rules', join(caseDir, 'tests.yaml')]).catch(
        (error: unknown) => {
          const output = isRecord(error) ? `${String(error.stdout)}\n${String(error.stderr)}` : '';
          throw new Error(`promtool test rules failed:\n${output}`, { cause: error });
        },
      );
      expect(result.stdout + result.stderr).toContain('SUCCESS');
    },
    HELM_BUILD_TIMEOUT_MS,
  );

  it('both monitors take the job from a label the Service and the pods carry: the release name', async () => {
    const release = RELEASES[1] ?? { name: '', namespace: '' };
    const rendered = await enabled(release);
    const monitors = rendered.objects.filter((object) => object.kind.endsWith('Monitor'));
    expect(monitors).toHaveLength(2);
    const podLabels = rendered.one('Deployment').spec?.template.metadata?.labels ?? {};
    const serviceLabels = rendered.one('Service').metadata.labels ?? {};
    for (const monitor of monitors) {
      const jobLabel = (monitor as { spec?: { jobLabel?: string } }).spec?.jobLabel ?? '';
      expect(podLabels[jobLabel]).toBe(release.name);
      expect(serviceLabels[jobLabel]).toBe(release.name);
    }
  });

  it('matches the rules docs/metrics.md lists for release kreload in kreload-system', async () => {
    const docs = await readFile(join(repoRoot, 'docs', 'metrics.md'), 'utf8');
    const block = /## Alerts[\s\S]*?```yaml\n([\s\S]*?)```/.exec(docs)?.[1] ?? '';
    const documented = parseYaml(block);
    const rule = prometheusRule(await enabled(RELEASES[0] ?? { name: '', namespace: '' }));
    const essentials = (rules: readonly Record<string, unknown>[]): unknown[] =>
      rules.map(({ alert, expr, for: pending, labels }) => ({
        alert,
        expr,
        for: pending,
        severity: isRecord(labels) ? labels.severity : undefined,
      }));
    expect(isRecord(documented) && Array.isArray(documented.groups)).toBe(true);
    const groups = (documented as { groups: { rules: Record<string, unknown>[] }[] }).groups;
    expect(essentials(groups[0]?.rules ?? [])).toEqual(
      essentials(rule.spec.groups[0]?.rules ?? []),
    );
  });

  it('adds alert labels, drops disabled alerts and appends additional rules', async () => {
    const extra = { alert: 'MyKreloadAlert', expr: 'vector(1)' };
    const release = RELEASES[0] ?? { name: '', namespace: '' };
    const rule = prometheusRule(
      await enabled(release, {
        alertLabels: { team: 'platform', severity: 'page' },
        disabled: ['KreloadSplitBrain', 'KreloadRolloutsHalted'],
        additionalRules: [extra],
        labels: { release: 'kube-prometheus-stack' },
      }),
    );
    expect(alertNames(rule)).toEqual([
      ...ALL_ALERTS.filter(
        (name) => name !== 'KreloadSplitBrain' && name !== 'KreloadRolloutsHalted',
      ),
      'MyKreloadAlert',
    ]);
    expect(rule.spec.groups[0]?.rules[0]?.labels).toEqual({ severity: 'page', team: 'platform' });
    expect(rule.spec.groups[0]?.rules.at(-1)).toEqual(extra);
    expect(rule.metadata.labels?.release).toBe('kube-prometheus-stack');
  });

  it('is not rendered by default, nor without the Prometheus Operator API', async () => {
    const byDefault = await render(helm, { apiVersions: MONITORING });
    expect(byDefault.objects.filter((object) => object.kind === 'PrometheusRule')).toEqual([]);
    const noApi = await render(helm, {
      values: { reloader: { prometheusRule: { enabled: true } } },
    });
    expect(noApi.objects.filter((object) => object.kind === 'PrometheusRule')).toEqual([]);
    const notes = await renderNotes(helm, {
      values: { reloader: { prometheusRule: { enabled: true } } },
    });
    expect(notes).toContain(
      'reloader.prometheusRule.enabled: the cluster has no monitoring.coreos.com/v1 API (Prometheus Operator CRDs), so no PrometheusRule was installed.',
    );
  });
});
