import { describe, expect, it } from 'vitest';
import type { SourceKey, WorkloadView } from '../../core/types.ts';
import {
  CONFIG_REVISIONS,
  CONFIG_REVISIONS_SECRETS,
  DEFAULT_ANNOTATION_KEYS as KEYS,
  SNAPSHOTS,
} from '../../core/types.ts';
import type { WorkloadKindRow } from '../../rollout/kinds.ts';
import { sha1Hex } from '../../core/hash.ts';
import { kindRow } from '../../rollout/kinds.ts';
import { aContainer, aWorkload } from '../../testing/builders.ts';
import type { ReconcilePlan, SourceFacts } from './model.ts';
import { planReconcile } from './plan.ts';

const NS = 'team-a';
const CM: SourceKey = 'configmap/app-config';
const SECRET: SourceKey = 'secret/db';
const CM_ENV = 'STAKATER_APP_CONFIG_CONFIGMAP';
const H1 = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const H2 = 'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c';
const H3 = '3333333333333333333333333333333333333333';
const S1 = '5555555555555555555555555555555555555555';

function present(hash: string): SourceFacts {
  return { status: { state: 'present', hash, uid: `uid-${hash.slice(0, 4)}`, annotations: {} } };
}

interface Setup {
  readonly w?: Readonly<Record<string, string>>;
  readonly pt?: Readonly<Record<string, string>>;
  readonly cmEnv?: string;
  readonly kind?: 'Deployment' | 'StatefulSet' | 'CronJob';
  /** W label kreload.io/revision-digest. */
  readonly digest?: string;
}

/** The digest of the last pinned roll, spelled out: SHA-1 of the source-hashes JSON. */
function digestOf(cm: string, secret: string = S1): string {
  return sha1Hex(`{"${CM}":"${cm}","${SECRET}":"${secret}"}`);
}

function view(setup: Setup): WorkloadView {
  let app = aContainer('app').withEnvFrom('configmap', 'app-config').withEnvFrom('secret', 'db');
  if (setup.cmEnv) app = app.withStakaterEnv(CM_ENV, setup.cmEnv);
  let builder = aWorkload(setup.kind ?? 'Deployment', NS, 'api')
    .withAnnotation(KEYS.auto, 'true')
    .withContainer(app);
  for (const [key, value] of Object.entries(setup.w ?? {})) {
    builder = builder.withAnnotation(key, value);
  }
  for (const [key, value] of Object.entries(setup.pt ?? {})) {
    builder = builder.withTemplateAnnotation(key, value);
  }
  const built = builder.build();
  return setup.digest === undefined ? built : { ...built, revisionDigest: setup.digest };
}

function plan(setup: Setup, live: { cm: string; secret?: string }, enabled = true): ReconcilePlan {
  const row: WorkloadKindRow = kindRow(setup.kind ?? 'Deployment');
  const facts: Partial<Record<SourceKey, SourceFacts>> = {
    [CM]: present(live.cm),
    [SECRET]: present(live.secret ?? S1),
  };
  return planReconcile({
    view: view(setup),
    row,
    options: {
      strategy: 'env-vars',
      reloadOnCreate: false,
      reloadOnDelete: false,
      keys: KEYS,
      autoReloadAll: false,
      configRevisions: enabled,
    },
    candidates: {},
    facts: (key) => facts[key] ?? { status: { state: 'absent' } },
    marks: [],
    now: 1_767_225_600_000,
  });
}

const OPTED_IN = { [CONFIG_REVISIONS]: 'true' };
const SECRET_BASELINE = { 'kreload.io/baseline': `{"${SECRET}":"${S1}"}` };

describe('planReconcile with config revisions (ADR 0036)', () => {
  it('an opted-in roll pins the tracked ConfigMaps and records the live hashes on W', () => {
    const p = plan({ w: { ...OPTED_IN, ...SECRET_BASELINE }, cmEnv: H1 }, { cm: H2 });
    expect(p.action).toBe('roll');
    expect(p.rolling).toEqual([CM]);
    expect(p.revisions).toEqual({
      optedIn: true,
      pinned: [{ key: CM, type: 'CONFIGMAP', name: 'app-config', hash: H2 }],
      current: new Map(),
    });
    expect(p.revisionDigest).toBe(digestOf(H2));
    expect(p.envWrites).toEqual([{ container: 'app', name: CM_ENV, value: H2 }]);
  });

  it('pins Secrets too with config-revisions-secrets', () => {
    const w = { ...OPTED_IN, [CONFIG_REVISIONS_SECRETS]: 'true', ...SECRET_BASELINE };
    const p = plan({ w, cmEnv: H1 }, { cm: H2 });
    expect(p.revisions?.pinned.map((s) => s.key)).toEqual([CM, SECRET]);
  });

  it('after rollout undo (template on H1, last pinned H2, live H2) it does not roll forward', () => {
    const pt = { [SNAPSHOTS]: `{"${CM}":"app-config-dc30e0faa8"}` };
    const p = plan({ w: OPTED_IN, pt, cmEnv: H1, digest: digestOf(H2) }, { cm: H2 });
    expect(p.action).toBe('none');
    expect(p.keys.find((k) => k.key === CM)).toMatchObject({ applied: H2, rule: 'R2' });
  });

  it('rolls forward once the live source changes again after an undo', () => {
    const p = plan({ w: OPTED_IN, cmEnv: H1, digest: digestOf(H2) }, { cm: H3 });
    expect(p.action).toBe('roll');
    expect(p.revisions?.pinned).toEqual([
      { key: CM, type: 'CONFIGMAP', name: 'app-config', hash: H3 },
    ]);
    expect(p.revisionDigest).toBe(digestOf(H3));
  });

  it('a live source reverted to what the undone-to template runs: no roll, the digest follows', () => {
    const w = { ...OPTED_IN, ...SECRET_BASELINE };
    const p = plan({ w, cmEnv: H1, digest: digestOf(H2) }, { cm: H1 });
    expect(p.action).toBe('baseline');
    expect(p.rolling).toEqual([]);
    expect(p.revisionDigest).toBe(digestOf(H1));
  });

  it('records the digest at first sight, so an undo right after the first roll is recognised', () => {
    const p = plan({ w: OPTED_IN }, { cm: H1 });
    expect(p.action).toBe('baseline');
    expect(p.revisionDigest).toBe(digestOf(H1));
  });

  it('opting out rolls once to restore the live references and drops the digest label', () => {
    const pt = { [SNAPSHOTS]: `{"${CM}":"app-config-d93dd00779"}` };
    const p = plan({ w: SECRET_BASELINE, pt, cmEnv: H2, digest: digestOf(H2) }, { cm: H2 });
    expect(p.action).toBe('roll');
    expect(p.rolling).toEqual([CM]);
    expect(p.revisions).toEqual({
      optedIn: false,
      pinned: [],
      current: new Map([[CM, 'app-config-d93dd00779']]),
    });
    expect(p.revisionDigest).toBeNull();
  });

  it('a digest while a source is unknown decides by the rules as usual', () => {
    const p = planReconcile({
      view: view({ w: OPTED_IN, cmEnv: H1, digest: digestOf(H2) }),
      row: kindRow('Deployment'),
      options: {
        strategy: 'env-vars',
        reloadOnCreate: false,
        reloadOnDelete: false,
        keys: KEYS,
        autoReloadAll: false,
        configRevisions: true,
      },
      candidates: {},
      facts: (key) => (key === CM ? present(H2) : { status: { state: 'unknown' } }),
      marks: [],
      now: 1_767_225_600_000,
    });
    expect(p.action).toBe('roll');
    expect(p.revisionDigest).toBeUndefined();
  });

  it('without opt-in or snapshots nothing changes', () => {
    const p = plan({ w: SECRET_BASELINE, cmEnv: H1 }, { cm: H2 });
    expect(p.revisions).toBeUndefined();
    expect(p.revisionDigest).toBeUndefined();
  });

  it.each<[string, Setup, boolean, string]>([
    ['a CronJob', { w: OPTED_IN, kind: 'CronJob' }, true, 'need a Deployment'],
    ['the flag off', { w: OPTED_IN }, false, '--enable-config-revisions'],
    ['a bad value', { w: { [CONFIG_REVISIONS]: 'yes' } }, true, 'not "true" or "false"'],
  ])('ignores the opt-in on %s and says why', (_name, setup, enabled, problem) => {
    const p = plan(setup, { cm: H2 }, enabled);
    expect(p.revisions).toBeUndefined();
    expect(p.problems.map((found) => [found.key, found.problem.includes(problem)])).toEqual([
      [CONFIG_REVISIONS, true],
    ]);
  });
});
