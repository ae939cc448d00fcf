// The scenario table behind reload-env-vars and reload-annotations: one row per reference mode,
// annotation rule or bad input (spec §3, §5, §6, §14), each run for every workload kind. A row
// says what exists, what changes, and what kreload must have written by then; the suite turns
// that into the exact objects expected for each strategy.
import type { V1PodSpec } from '@kubernetes/client-node';
import {
  AUTO,
  BASELINE,
  CONFIGMAP_AUTO,
  CONFIGMAP_EXCLUDE,
  CONFIGMAP_RELOAD,
  IGNORE,
  LAST_RELOADED_FROM,
  MATCH,
  PAUSE_PERIOD,
  SEARCH,
  SECRET_AUTO,
  SECRET_RELOAD,
  SOURCE_HASHES,
} from '../harness/annotations.ts';
import {
  sourceHash,
  sourceKey,
  type ConfigMapSpec,
  type SecretSpec,
  type SourceChange,
  type SourceRef,
  type SourceSpec,
} from '../harness/sources.ts';
import { APP, SIDECAR, podSpec, type WorkloadKindName } from '../harness/workloads.ts';

export type Strategy = 'env-vars' | 'annotations';

export interface RolledKey {
  readonly source: SourceSpec;
  /** The container §3.6 selects: it carries the env var, or is the one in `containerRefs`. */
  readonly container: string;
}

export interface ExpectedEvent {
  /** `workload`, or the source the Event is about. */
  readonly on: 'workload' | SourceRef;
  readonly reason: string;
  readonly strategies?: readonly Strategy[];
}

export interface ScenarioCase {
  /** Created before the workload. */
  readonly sources: readonly SourceSpec[];
  readonly annotations?: Readonly<Record<string, string>>;
  readonly templateAnnotations?: Readonly<Record<string, string>>;
  readonly podSpec: V1PodSpec;
  readonly changes: readonly SourceChange[];
  /** Tracked keys with a known hash when kreload first sees the workload: its baseline. */
  readonly firstSight: Readonly<Record<string, string>>;
  /** What rolls after the changes; empty means the workload must not roll. */
  readonly rolls: readonly RolledKey[];
  /** The W baseline after changes that roll nothing (default: firstSight). */
  readonly baselineAfter?: Readonly<Record<string, string>>;
  /** Keys whose env-var names collide (§6.3): a roll writes PT source-hashes for all of them. */
  readonly collisionGroup?: readonly string[];
  /** PT keys the workload was created with that a roll replaces (malformed state, §5.1). */
  readonly replacedTemplateKeys?: readonly string[];
  readonly events?: readonly ExpectedEvent[];
}

export interface Scenario {
  readonly id: string;
  readonly title: string;
  readonly kinds?: readonly WorkloadKindName[];
  readonly strategies?: readonly Strategy[];
  /** `base` is unique per kind and row: every object the row creates is named after it. */
  readonly build: (base: string) => ScenarioCase;
}

// --- builders -----------------------------------------------------------------------------------

export function configMap(
  name: string,
  extra: Partial<Omit<ConfigMapSpec, 'type' | 'name'>> = {},
): ConfigMapSpec {
  return { type: 'CONFIGMAP', name, data: { 'app.properties': `name=${name}` }, ...extra };
}

export function secret(name: string, extra: { data?: SecretSpec['data'] } = {}): SecretSpec {
  return { type: 'SECRET', name, data: extra.data ?? { password: `initial-${name}` } };
}

/** The same source with different content. */
export function edited(spec: SourceSpec): SourceSpec {
  return spec.type === 'CONFIGMAP'
    ? { ...spec, data: { ...spec.data, revision: '2' } }
    : { ...spec, data: { ...spec.data, rotated: new Uint8Array([0x80, 0x00, 0xff]) } };
}

export function replace(spec: SourceSpec): SourceChange {
  return { op: 'replace', spec };
}

export function baselineOf(...specs: readonly SourceSpec[]): Record<string, string> {
  return Object.fromEntries(specs.map((spec) => [sourceKey(spec), sourceHash(spec)]));
}

export const envFrom = (name: string) => ({ envFrom: [{ configMapRef: { name } }] });

/** Auto on W, the ConfigMap referenced through `refs`, edited once; rolls into `container`. */
export function autoCase(
  base: string,
  refs: (name: string) => { podSpec: V1PodSpec; container: string },
  annotations: Readonly<Record<string, string>> = { [AUTO]: 'true' },
): ScenarioCase {
  const source = configMap(`${base}-cfg`);
  const { podSpec: spec, container } = refs(source.name);
  const next = edited(source);
  return {
    sources: [source],
    annotations,
    podSpec: spec,
    changes: [replace(next)],
    firstSight: baselineOf(source),
    rolls: [{ source: next, container }],
  };
}

/** The ConfigMap is referenced by `app` and edited, but the annotations do not track it. */
export function untrackedCase(
  base: string,
  annotations: Readonly<Record<string, string>>,
  sourceAnnotations: Readonly<Record<string, string>> = {},
): ScenarioCase {
  const source = configMap(`${base}-cfg`, { annotations: sourceAnnotations });
  return {
    sources: [source],
    annotations,
    podSpec: podSpec({ app: envFrom(source.name) }),
    changes: [replace(edited(source))],
    firstSight: {},
    rolls: [],
  };
}

const invalidOnWorkload: ExpectedEvent = { on: 'workload', reason: 'InvalidAnnotation' };

// --- the table ------------------------------------------------------------------------------------

export const SCENARIOS: readonly Scenario[] = [
  // §3.6 references, with auto on W.
  {
    id: 'envfrom',
    title: 'auto + envFrom in the sidecar rolls into the sidecar',
    build: (base) =>
      autoCase(base, (name) => ({
        podSpec: podSpec({ sidecar: envFrom(name) }),
        container: SIDECAR,
      })),
  },
  {
    id: 'valuefrom',
    title: 'auto + env valueFrom configMapKeyRef rolls into that container',
    build: (base) =>
      autoCase(base, (name) => ({
        podSpec: podSpec({
          app: {
            env: [
              { name: 'SETTING', valueFrom: { configMapKeyRef: { name, key: 'app.properties' } } },
            ],
          },
        }),
        container: APP,
      })),
  },
  {
    id: 'volume',
    title: 'auto + configMap volume rolls into the container that mounts it',
    build: (base) =>
      autoCase(base, (name) => ({
        podSpec: podSpec({
          sidecar: { volumeMounts: [{ name: 'config', mountPath: '/etc/config' }] },
          volumes: [{ name: 'config', configMap: { name } }],
        }),
        container: SIDECAR,
      })),
  },
  {
    id: 'projected',
    title: 'auto + projected volume rolls into the container that mounts it',
    build: (base) =>
      autoCase(base, (name) => ({
        podSpec: podSpec({
          app: { volumeMounts: [{ name: 'bundle', mountPath: '/etc/bundle' }] },
          volumes: [
            {
              name: 'bundle',
              projected: { sources: [{ downwardAPI: { items: [] } }, { configMap: { name } }] },
            },
          ],
        }),
        container: APP,
      })),
  },
  {
    id: 'init',
    title: 'auto + a reference in an init container only rolls into the first regular container',
    build: (base) =>
      autoCase(base, (name) => ({ podSpec: podSpec({ init: envFrom(name) }), container: APP })),
  },
  {
    id: 'secret-bytes',
    title: 'auto + secretKeyRef, non-UTF-8 bytes hashed raw (vector 8), rolls on rotation',
    build: (base) => {
      const source = secret(`${base}-sec`, {
        data: { user: 'admin', cert: new Uint8Array([0xff, 0x00, 0xfe]) },
      });
      const next = edited(source);
      return {
        sources: [source],
        annotations: { [AUTO]: 'true' },
        podSpec: podSpec({
          sidecar: {
            env: [
              { name: 'CERT', valueFrom: { secretKeyRef: { name: source.name, key: 'cert' } } },
            ],
          },
        }),
        changes: [replace(next)],
        firstSight: { [sourceKey(source)]: 'e5d9c4c91abefb185dc0a772c7a94ad6da2ca3fe' },
        rolls: [{ source: next, container: SIDECAR }],
      };
    },
  },
  {
    id: 'binary',
    title: 'binaryData is hashed as padded base64 (vector 4)',
    build: (base) => {
      const source = configMap(`${base}-bin`, {
        data: { test: 'test' },
        binaryData: { bintest: Buffer.from('test') },
      });
      const next: SourceSpec = {
        ...source,
        binaryData: { bintest: new Uint8Array([0x00, 0x01, 0xfe, 0xff]) },
      };
      return {
        sources: [source],
        annotations: { [AUTO]: 'true' },
        podSpec: podSpec({ app: envFrom(source.name) }),
        changes: [replace(next)],
        firstSight: { [sourceKey(source)]: '0d58150de76a895b24f4ca213f590766160c4349' },
        rolls: [{ source: next, container: APP }],
      };
    },
  },
  {
    id: 'one-mib',
    title: 'a 1 MB ConfigMap is hashed like any other (vector 6)',
    kinds: ['Deployment'],
    build: (base) => {
      const source = configMap(`${base}-big`, { data: { big: 'a'.repeat(1_000_000) } });
      const next: SourceSpec = { ...source, data: { big: 'b'.repeat(1_000_000) } };
      return {
        sources: [source],
        annotations: { [AUTO]: 'true' },
        podSpec: podSpec({ app: envFrom(source.name) }),
        changes: [replace(next)],
        firstSight: { [sourceKey(source)]: 'd8b400f8752010b060ea638cb774f3852f8eecbc' },
        rolls: [{ source: next, container: APP }],
      };
    },
  },
  // §3.5 decision rules.
  {
    id: 'typed-auto',
    title: 'typed auto (configmap…/auto) rolls',
    build: (base) =>
      autoCase(base, (name) => ({ podSpec: podSpec({ app: envFrom(name) }), container: APP }), {
        [CONFIGMAP_AUTO]: 'true',
      }),
  },
  {
    id: 'typed-auto-other',
    title: 'typed auto for Secrets does not track a ConfigMap',
    build: (base) => untrackedCase(base, { [SECRET_AUTO]: 'true' }),
  },
  {
    id: 'pt-fallback',
    title: 'auto on the pod template applies when W has none of the keys',
    build: (base) => ({
      ...autoCase(
        base,
        (name) => ({ podSpec: podSpec({ app: envFrom(name) }), container: APP }),
        {},
      ),
      templateAnnotations: { [AUTO]: 'true' },
    }),
  },
  {
    id: 'auto-false',
    title: 'auto "false" on W blocks auto "true" on the pod template',
    build: (base) => ({
      ...untrackedCase(base, { [AUTO]: 'false' }),
      templateAnnotations: { [AUTO]: 'true' },
    }),
  },
  {
    id: 'list-regex',
    title: 'reload list: a regex element matches; an invalid element is skipped with an Event',
    build: (base) => ({
      ...autoCase(
        base,
        (name) => ({ podSpec: podSpec({ sidecar: envFrom(name) }), container: SIDECAR }),
        { [CONFIGMAP_RELOAD]: `app-(, ${base}-c[a-z]+` },
      ),
      events: [invalidOnWorkload],
    }),
  },
  {
    id: 'list-unref',
    title: 'reload list: an unreferenced source rolls into the first regular container',
    build: (base) =>
      autoCase(base, () => ({ podSpec: podSpec({}), container: APP }), {
        [CONFIGMAP_RELOAD]: `${base}-cfg`,
      }),
  },
  {
    id: 'secret-list',
    title: 'secret reload list: an unreferenced Secret rolls into the first regular container',
    build: (base) => {
      const source = secret(`${base}-sec`);
      const next = edited(source);
      return {
        sources: [source],
        annotations: { [SECRET_RELOAD]: source.name },
        podSpec: podSpec({}),
        changes: [replace(next)],
        firstSight: baselineOf(source),
        rolls: [{ source: next, container: APP }],
      };
    },
  },
  {
    id: 'list-anchored',
    title: 'reload list elements are anchored as a whole: "a|b" does not match "a-x" (D3)',
    build: (base) => {
      const source = configMap(`${base}-a-x`);
      return {
        sources: [source],
        annotations: { [CONFIGMAP_RELOAD]: `${base}-a|${base}-b` },
        podSpec: podSpec({ app: envFrom(source.name) }),
        changes: [replace(edited(source))],
        firstSight: {},
        rolls: [],
      };
    },
  },
  {
    id: 'search-match',
    title: 'search on W + match on the source rolls',
    build: (base) => {
      const source = configMap(`${base}-cfg`, { annotations: { [MATCH]: 'true' } });
      const next = edited(source);
      return {
        sources: [source],
        annotations: { [SEARCH]: 'true' },
        podSpec: podSpec({ app: envFrom(source.name) }),
        changes: [replace(next)],
        firstSight: baselineOf(source),
        rolls: [{ source: next, container: APP }],
      };
    },
  },
  {
    id: 'search-nomatch',
    title: 'search on W without match on the source does not track it',
    build: (base) => untrackedCase(base, { [SEARCH]: 'true' }),
  },
  {
    id: 'ignore',
    title: 'ignore "true" on the source wins over auto',
    build: (base) => untrackedCase(base, { [AUTO]: 'true' }, { [IGNORE]: 'true' }),
  },
  {
    id: 'ignore-inexact',
    title: 'ignore "True" counts as unset: rolls, InvalidAnnotation on the ConfigMap',
    build: (base) => {
      const source = configMap(`${base}-cfg`, { annotations: { [IGNORE]: 'True' } });
      const next = edited(source);
      return {
        sources: [source],
        annotations: { [AUTO]: 'true' },
        podSpec: podSpec({ app: envFrom(source.name) }),
        changes: [replace(next)],
        firstSight: baselineOf(source),
        rolls: [{ source: next, container: APP }],
        events: [{ on: source, reason: 'InvalidAnnotation' }],
      };
    },
  },
  {
    id: 'exclude',
    title: 'the exclude list beats auto',
    build: (base) =>
      untrackedCase(base, { [AUTO]: 'true', [CONFIGMAP_EXCLUDE]: `other, ${base}-cfg` }),
  },
  {
    id: 'auto-yes',
    title: 'auto "yes" is unparsable: false, with InvalidAnnotation',
    build: (base) => ({ ...untrackedCase(base, { [AUTO]: 'yes' }), events: [invalidOnWorkload] }),
  },
  {
    id: 'typed-unparsable',
    title: 'an unparsable typed auto (" true") counts as false and vetoes its type despite auto',
    build: (base) => ({
      ...untrackedCase(base, { [AUTO]: 'true', [CONFIGMAP_AUTO]: ' true' }),
      events: [invalidOnWorkload],
    }),
  },
  {
    id: 'search-inexact',
    title: 'search "True" counts as unset, with InvalidAnnotation',
    build: (base) => ({
      ...untrackedCase(base, { [SEARCH]: 'True' }, { [MATCH]: 'true' }),
      events: [invalidOnWorkload],
    }),
  },
  {
    id: 'unannotated',
    title: 'a referenced source without any annotation is not tracked',
    build: (base) => untrackedCase(base, {}),
  },
  // §5.3 / §5.5 without the create and delete flags, and updates that change no hash.
  {
    id: 'missing',
    title: 'a missing source is unknown (nothing written); its creation records a baseline',
    build: (base) => {
      const source = configMap(`${base}-later`);
      return {
        sources: [],
        annotations: { [AUTO]: 'true' },
        podSpec: podSpec({ app: envFrom(source.name) }),
        changes: [{ op: 'create', spec: source }],
        firstSight: {},
        rolls: [],
        baselineAfter: baselineOf(source),
      };
    },
  },
  {
    id: 'deleted',
    title: 'deleting a tracked source rolls nothing and keeps the baseline',
    build: (base) => {
      const source = configMap(`${base}-cfg`);
      return {
        sources: [source],
        annotations: { [AUTO]: 'true' },
        podSpec: podSpec({ app: envFrom(source.name) }),
        changes: [{ op: 'delete', source }],
        firstSight: baselineOf(source),
        rolls: [],
      };
    },
  },
  {
    id: 'label-only',
    title: 'a label-only update of a tracked source rolls nothing',
    build: (base) => {
      const source = configMap(`${base}-cfg`);
      return {
        sources: [source],
        annotations: { [AUTO]: 'true' },
        podSpec: podSpec({ app: envFrom(source.name) }),
        changes: [{ op: 'metadata', source, labels: { 'e2e.kreload.io/touched': 'yes' } }],
        firstSight: baselineOf(source),
        rolls: [],
      };
    },
  },
  {
    id: 'noop',
    title: 'an update that leaves the data as it was (unrelated annotation) rolls nothing',
    build: (base) => {
      const source = configMap(`${base}-cfg`);
      return {
        sources: [source],
        annotations: { [AUTO]: 'true' },
        podSpec: podSpec({ app: envFrom(source.name) }),
        changes: [{ op: 'metadata', source, annotations: { 'e2e.kreload.io/note': 'same data' } }],
        firstSight: baselineOf(source),
        rolls: [],
      };
    },
  },
  {
    id: 'two-sources',
    title: 'of two tracked sources only the changed one rolls; the other keeps its state',
    build: (base) => {
      const config = configMap(`${base}-cfg`);
      const credentials = secret(`${base}-sec`);
      const next = edited(config);
      return {
        sources: [config, credentials],
        annotations: { [AUTO]: 'true' },
        podSpec: podSpec({
          app: envFrom(config.name),
          sidecar: { envFrom: [{ secretRef: { name: credentials.name } }] },
        }),
        changes: [replace(next)],
        firstSight: baselineOf(config, credentials),
        rolls: [{ source: next, container: APP }],
      };
    },
  },
  {
    id: 'collision',
    title: 'two names with one env var (§6.3): one roll, state per source, no flapping',
    build: (base) => {
      const dashed = configMap(`${base}-c-a`);
      const dotted = configMap(`${base}-c.a`);
      const next = edited(dashed);
      return {
        sources: [dashed, dotted],
        annotations: { [AUTO]: 'true' },
        podSpec: podSpec({
          app: {
            envFrom: [
              { configMapRef: { name: dashed.name } },
              { configMapRef: { name: dotted.name } },
            ],
          },
        }),
        changes: [replace(next)],
        firstSight: baselineOf(dashed, dotted),
        rolls: [{ source: next, container: APP }],
        collisionGroup: [sourceKey(dashed), sourceKey(dotted)],
        events: [{ on: 'workload', reason: 'EnvVarCollision', strategies: ['env-vars'] }],
      };
    },
  },
  // §14 bad input on workloads.
  {
    id: 'bad-baseline',
    title: 'a malformed kreload.io/baseline counts as absent and is rewritten',
    build: (base) => ({
      ...autoCase(base, (name) => ({ podSpec: podSpec({ app: envFrom(name) }), container: APP }), {
        [AUTO]: 'true',
        [BASELINE]: '{"configmap/x":',
      }),
      events: [invalidOnWorkload],
    }),
  },
  {
    id: 'bad-pt-state',
    title: 'malformed source-hashes and last-reloaded-from count as absent: baseline, then a roll',
    strategies: ['annotations'],
    build: (base) => ({
      ...autoCase(base, (name) => ({ podSpec: podSpec({ app: envFrom(name) }), container: APP })),
      templateAnnotations: { [SOURCE_HASHES]: 'not json', [LAST_RELOADED_FROM]: '{"type":' },
      replacedTemplateKeys: [SOURCE_HASHES, LAST_RELOADED_FROM],
      events: [invalidOnWorkload],
    }),
  },
  {
    id: 'bad-pause',
    title: 'an invalid pause-period rolls without pausing, with InvalidAnnotation',
    kinds: ['Deployment'],
    build: (base) => ({
      ...autoCase(base, (name) => ({ podSpec: podSpec({ app: envFrom(name) }), container: APP }), {
        [AUTO]: 'true',
        [PAUSE_PERIOD]: '5 minutes',
      }),
      events: [invalidOnWorkload],
    }),
  },
];
