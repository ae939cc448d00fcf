// Spec §3.5 step 7 under --auto-reload-all: every referenced source of an unannotated workload is
// tracked, unless W opts out (auto "false", or any non-empty auto that is not true), a typed auto
// "false" vetoes its type (D5), or the source carries ignore.
import { AUTO, CONFIGMAP_AUTO, IGNORE } from '../harness/annotations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { APP, SIDECAR, podSpec } from '../harness/workloads.ts';
import { defineReloadRuleTable } from './reload-rules.suite.ts';
import {
  autoCase,
  baselineOf,
  edited,
  envFrom,
  replace,
  secret,
  untrackedCase,
  type Scenario,
} from './reload-rules.table.ts';

const AUTO_RELOAD_ALL: readonly Scenario[] = [
  {
    id: 'plain',
    title: 'an unannotated workload rolls on a referenced ConfigMap',
    build: (base) =>
      autoCase(base, (name) => ({ podSpec: podSpec({ app: envFrom(name) }), container: APP }), {}),
  },
  {
    id: 'plain-secret',
    title: 'an unannotated workload rolls on a referenced Secret',
    build: (base) => {
      const source = secret(`${base}-sec`);
      const next = edited(source);
      return {
        sources: [source],
        podSpec: podSpec({ sidecar: { envFrom: [{ secretRef: { name: source.name } }] } }),
        changes: [replace(next)],
        firstSight: baselineOf(source),
        rolls: [{ source: next, container: SIDECAR }],
      };
    },
  },
  {
    id: 'auto-empty',
    title: 'auto "" counts as empty: the fallback applies',
    build: (base) =>
      autoCase(base, (name) => ({ podSpec: podSpec({ app: envFrom(name) }), container: APP }), {
        [AUTO]: '',
      }),
  },
  {
    id: 'auto-false',
    title: 'auto "false" opts out',
    build: (base) => untrackedCase(base, { [AUTO]: 'false' }),
  },
  {
    id: 'auto-yes',
    title: 'a non-empty unparsable auto ("yes") disables the fallback, with InvalidAnnotation',
    build: (base) => ({
      ...untrackedCase(base, { [AUTO]: 'yes' }),
      events: [{ on: 'workload', reason: 'InvalidAnnotation' }],
    }),
  },
  {
    id: 'typed-false',
    title: 'typed auto "false" vetoes ConfigMaps, even with auto "true" (D5)',
    build: (base) => untrackedCase(base, { [AUTO]: 'true', [CONFIGMAP_AUTO]: 'false' }),
  },
  {
    id: 'unreferenced',
    title: 'an unreferenced source is not tracked',
    build: (base) => ({ ...untrackedCase(base, {}), podSpec: podSpec({}) }),
  },
  {
    id: 'ignored',
    title: 'ignore on the source wins',
    build: (base) => untrackedCase(base, {}, { [IGNORE]: 'true' }),
  },
];

const fixture = useKreload({
  name: 'auto-reload-all',
  args: ([namespace]) => [
    `--namespaces=${String(namespace)}`,
    '--sync-delay=0',
    '--auto-reload-all',
  ],
});

defineReloadRuleTable(fixture, 'env-vars', {
  scenarios: AUTO_RELOAD_ALL,
  title: '--auto-reload-all',
});
