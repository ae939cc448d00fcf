// Runs the pinned helm binary against helm/kreload and parses what it renders. Shared by the chart's
// vitest files; it is not a test itself.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type {
  V1ClusterRole,
  V1ConfigMap,
  V1Container,
  V1Deployment,
  V1NetworkPolicy,
  V1PodDisruptionBudget,
  V1Role,
  V1RoleBinding,
  V1Secret,
  V1Service,
  V1ServiceAccount,
} from '@kubernetes/client-node';
import { load, loadAll } from 'js-yaml';

const run = promisify(execFile);

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const chartDir = join(repoRoot, 'helm', 'kreload');
export const RELEASE = 'kreload';
export const NAMESPACE = 'kreload-system';
/**
 * The Reloader values corpus, helm/kreload/tests/reloader-values/<name>.yaml: Reloader chart
 * 2.2.16's complete default file and user files written from that chart's keys.
 */
export const RELOADER_VALUES_FILES = [
  'default-2.2.16',
  'ha',
  'scoped',
  'servicemonitor',
  'alerts',
  'resources',
  'tolerations',
  'legacy-image',
  'tutorial-config',
] as const;
/**
 * Stakater Reloader's own default values, verbatim, helm/kreload/tests/reloader-upstream/<name>.yaml
 * (its README.md names each file's commit): 1.4.21, master, master with PR #1206, and the 2.0 charts.
 */
export const RELOADER_UPSTREAM_FILES = [
  'values-1.4.21-chart-2.2.15',
  'values-master-chart-2.2.16',
  'values-pr1206-chart-2.2.16',
  'values-v2-chart-reloader-v2-2.0.0',
  'values-v2-chart-reloader-3.0.0-beta.1',
] as const;
/** The first helm build compiles it from the Go module proxy; later runs reuse the cache. */
export const HELM_BUILD_TIMEOUT_MS = 20 * 60_000;

/** An RBAC rule as plain data (client-node's V1PolicyRule is a class). */
export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
}

/** A client-node model whose envelope is the one every rendered object has. */
type RenderedModel<T> = Omit<T, 'apiVersion' | 'kind' | 'metadata'> & KubeObject;

interface KindMap {
  ClusterRole: RenderedModel<V1ClusterRole>;
  ClusterRoleBinding: RenderedModel<V1RoleBinding>;
  ConfigMap: RenderedModel<V1ConfigMap>;
  Deployment: RenderedModel<V1Deployment>;
  NetworkPolicy: RenderedModel<V1NetworkPolicy>;
  PodDisruptionBudget: RenderedModel<V1PodDisruptionBudget>;
  Role: RenderedModel<V1Role>;
  RoleBinding: RenderedModel<V1RoleBinding>;
  Secret: RenderedModel<V1Secret>;
  Service: RenderedModel<V1Service>;
  ServiceAccount: RenderedModel<V1ServiceAccount>;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isKubeObject(value: unknown): value is KubeObject {
  return (
    isRecord(value) &&
    typeof value.apiVersion === 'string' &&
    typeof value.kind === 'string' &&
    isRecord(value.metadata) &&
    typeof value.metadata.name === 'string'
  );
}

/** The objects of one `helm template` run, with typed lookups by kind. */
export class Rendered {
  readonly objects: readonly KubeObject[];

  constructor(objects: readonly KubeObject[]) {
    this.objects = objects;
  }

  ofKind<K extends keyof KindMap>(kind: K): KindMap[K][] {
    return this.objects.filter((object): object is KindMap[K] => object.kind === kind);
  }

  one<K extends keyof KindMap>(kind: K, name?: string, namespace?: string): KindMap[K] {
    const matches = this.ofKind(kind).filter(
      (object) =>
        (name === undefined || object.metadata.name === name) &&
        (namespace === undefined || object.metadata.namespace === namespace),
    );
    const [only, ...others] = matches;
    if (only === undefined || others.length > 0) {
      throw new Error(`expected one ${kind} ${name ?? ''}, rendered ${String(matches.length)}`);
    }
    return only;
  }

  /** The kreload container of the Deployment. */
  container(): V1Container {
    const containers = this.one('Deployment').spec?.template.spec?.containers ?? [];
    const [only, ...others] = containers;
    if (only === undefined || others.length > 0) {
      throw new Error(`expected one container, rendered ${String(containers.length)}`);
    }
    return only;
  }

  args(): string[] {
    return this.container().args ?? [];
  }
}

export interface HelmResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** The helm binary: $HELM, or the one scripts/helm.sh builds and caches. */
export async function locateHelm(): Promise<string> {
  const fromEnv = process.env.HELM;
  if (fromEnv) {
    return fromEnv;
  }
  const { stdout } = await run('bash', [join(repoRoot, 'scripts', 'helm.sh')], {
    maxBuffer: 16 * 1024 * 1024,
  });
  const path = stdout.trim().split('\n').at(-1);
  if (!path) {
    throw new Error('scripts/helm.sh printed no path');
  }
  return path;
}

export async function runHelm(helm: string, args: readonly string[]): Promise<HelmResult> {
  try {
    const { stdout, stderr } = await run(helm, args, { maxBuffer: 64 * 1024 * 1024 });
    return { ok: true, stdout, stderr };
  } catch (error: unknown) {
    if (isRecord(error) && typeof error.stdout === 'string' && typeof error.stderr === 'string') {
      return { ok: false, stdout: error.stdout, stderr: error.stderr };
    }
    throw error;
  }
}

export interface ChartInput {
  /** Values files, relative to the chart (e.g. `ci/ha-values.yaml`). */
  files?: readonly string[];
  /** Values given inline, applied after the files. */
  values?: Record<string, unknown>;
  /** Release namespace; NAMESPACE by default. */
  namespace?: string;
  /** Release name; RELEASE by default. */
  release?: string;
  /**
   * API versions the cluster serves beyond the built-in ones (`--api-versions`), e.g.
   * `monitoring.coreos.com/v1` for a cluster with the Prometheus Operator CRDs.
   */
  apiVersions?: readonly string[];
}

function apiVersionArgs(input: ChartInput): string[] {
  return (input.apiVersions ?? []).flatMap((version) => ['--api-versions', version]);
}

async function withValueArgs<T>(
  input: ChartInput,
  use: (args: string[]) => Promise<T>,
): Promise<T> {
  const args = (input.files ?? []).flatMap((file) => ['--values', join(chartDir, file)]);
  if (input.values === undefined) {
    return use(args);
  }
  const dir = await mkdtemp(join(tmpdir(), 'kreload-values-'));
  try {
    const file = join(dir, 'values.json');
    await writeFile(file, JSON.stringify(input.values));
    return await use([...args, '--values', file]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function templateChart(helm: string, input: ChartInput = {}): Promise<HelmResult> {
  return withValueArgs(input, (valueArgs) =>
    runHelm(helm, [
      'template',
      input.release ?? RELEASE,
      chartDir,
      '--namespace',
      input.namespace ?? NAMESPACE,
      ...apiVersionArgs(input),
      ...valueArgs,
    ]),
  );
}

/** NOTES.txt as `helm install` would print it, from a client-side dry run (no cluster). */
export async function renderNotes(helm: string, input: ChartInput = {}): Promise<string> {
  const result = await withValueArgs(input, (valueArgs) =>
    runHelm(helm, [
      'install',
      RELEASE,
      chartDir,
      '--dry-run=client',
      '--namespace',
      input.namespace ?? NAMESPACE,
      ...apiVersionArgs(input),
      ...valueArgs,
    ]),
  );
  if (!result.ok) {
    throw new Error(`helm install --dry-run failed:\n${result.stderr}`);
  }
  const notes = result.stdout.indexOf('\nNOTES:\n');
  if (notes < 0) throw new Error(`helm printed no NOTES:\n${result.stdout}`);
  return result.stdout.slice(notes + '\nNOTES:\n'.length);
}

export async function lintChart(helm: string, input: ChartInput = {}): Promise<HelmResult> {
  return withValueArgs(input, (valueArgs) =>
    runHelm(helm, [
      'lint',
      '--strict',
      chartDir,
      '--namespace',
      input.namespace ?? NAMESPACE,
      ...valueArgs,
    ]),
  );
}

export function parseObjects(yaml: string): KubeObject[] {
  return loadAll(yaml).filter(isKubeObject);
}

/** Renders the chart and fails with helm's message when rendering fails. */
export async function render(helm: string, input: ChartInput = {}): Promise<Rendered> {
  const result = await templateChart(helm, input);
  if (!result.ok) {
    throw new Error(`helm template failed:\n${result.stderr}`);
  }
  return new Rendered(parseObjects(result.stdout));
}

export function parseYaml(text: string): unknown {
  return load(text);
}

/** A policy rule with sorted lists, so rules compare independently of order. */
export function normalizeRule(rule: PolicyRule): PolicyRule {
  const sorted = (list: string[] | undefined): string[] | undefined =>
    list === undefined ? undefined : [...list].sort();
  const normalized: PolicyRule = {
    apiGroups: sorted(rule.apiGroups),
    verbs: [...rule.verbs].sort(),
  };
  normalized.resources = sorted(rule.resources);
  if (rule.resourceNames !== undefined) {
    normalized.resourceNames = sorted(rule.resourceNames);
  }
  return normalized;
}

export function normalizeRules(rules: readonly PolicyRule[]): PolicyRule[] {
  return rules
    .map(normalizeRule)
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}
