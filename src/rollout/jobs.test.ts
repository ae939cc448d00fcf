import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../core/json.ts';
import { objectAt } from '../core/json.ts';
import type { CronJobRunIdentity } from './jobs.ts';
import {
  JOB_NAME_MAX_LENGTH,
  MalformedObjectError,
  buildJobFromCronJob,
  buildRecreatedJob,
  cronJobRunName,
} from './jobs.ts';

const H1 = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const H2 = 'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c';
const HASHES = `{"configmap/app-config":"${H1}"}`;
const LRF = `{"type":"CONFIGMAP","name":"app-config","namespace":"team-a","hash":"${H1}","containerRefs":["app"],"observedAt":1767225600}`;

const POD_TEMPLATE: JsonObject = {
  metadata: { labels: { app: 'report' }, annotations: { team: 'a' } },
  spec: {
    restartPolicy: 'OnFailure',
    containers: [
      {
        name: 'app',
        image: 'registry.example/report:1',
        env: [{ name: 'STAKATER_APP_CONFIG_CONFIGMAP', value: H2 }],
        envFrom: [{ configMapRef: { name: 'app-config' } }],
      },
    ],
  },
};

const CRONJOB: JsonObject = {
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: {
    name: 'report',
    namespace: 'team-a',
    uid: 'cj-uid',
    resourceVersion: '77',
    annotations: { 'kreload.io/source-hashes': '{}', 'reloader.stakater.com/auto': 'true' },
    labels: { owner: 'cronjob-label-not-copied' },
  },
  spec: {
    schedule: '0 * * * *',
    suspend: false,
    jobTemplate: {
      metadata: {
        labels: { app: 'report', tier: 'batch' },
        annotations: { 'cronjob.kubernetes.io/instantiate': 'scheduled', note: 'kept' },
      },
      spec: { backoffLimit: 2, ttlSecondsAfterFinished: 600, template: POD_TEMPLATE },
    },
  },
  status: { lastScheduleTime: '2026-01-01T00:00:00Z' },
};

describe('buildJobFromCronJob (§7.3 item 2)', () => {
  it('env-vars: the Job of the contract, with the env var set in the template', () => {
    const job = buildJobFromCronJob(CRONJOB, {
      name: 'report-0123456789',
      sourceHashes: HASHES,
      change: {
        envWrites: [{ container: 'app', name: 'STAKATER_APP_CONFIG_CONFIGMAP', value: H1 }],
      },
    });
    expect(job).toEqual({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'report-0123456789',
        namespace: 'team-a',
        labels: { app: 'report', tier: 'batch' },
        // instantiate: manual, overlaid with the job template's, plus source-hashes.
        annotations: {
          'cronjob.kubernetes.io/instantiate': 'scheduled',
          note: 'kept',
          'kreload.io/source-hashes': HASHES,
        },
        ownerReferences: [
          {
            apiVersion: 'batch/v1',
            kind: 'CronJob',
            name: 'report',
            uid: 'cj-uid',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        backoffLimit: 2,
        ttlSecondsAfterFinished: 600,
        template: {
          ...POD_TEMPLATE,
          spec: {
            restartPolicy: 'OnFailure',
            containers: [
              {
                name: 'app',
                image: 'registry.example/report:1',
                env: [{ name: 'STAKATER_APP_CONFIG_CONFIGMAP', value: H1 }],
                envFrom: [{ configMapRef: { name: 'app-config' } }],
              },
            ],
          },
        },
      },
    });
  });

  it('annotations: last-reloaded-from in the template; instantiate defaults to manual', () => {
    const bare: JsonObject = {
      metadata: { name: 'report', namespace: 'team-a', uid: 'cj-uid' },
      spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'app' }] } } } } },
    };
    const job = buildJobFromCronJob(bare, {
      name: 'report-0123456789',
      sourceHashes: HASHES,
      change: { envWrites: [], lastReloadedFrom: LRF },
    });
    expect(JSON.stringify(job)).toBe(
      JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: {
          name: 'report-0123456789',
          namespace: 'team-a',
          annotations: {
            'cronjob.kubernetes.io/instantiate': 'manual',
            'kreload.io/source-hashes': HASHES,
          },
          ownerReferences: [
            {
              apiVersion: 'batch/v1',
              kind: 'CronJob',
              name: 'report',
              uid: 'cj-uid',
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: {
          template: {
            spec: { containers: [{ name: 'app' }] },
            metadata: { annotations: { 'reloader.stakater.com/last-reloaded-from': LRF } },
          },
        },
      }),
    );
  });

  it('never changes the CronJob object it was given', () => {
    const before = JSON.stringify(CRONJOB);
    buildJobFromCronJob(CRONJOB, {
      name: 'report-0123456789',
      sourceHashes: HASHES,
      change: { envWrites: [{ container: 'app', name: 'STAKATER_X_SECRET', value: H1 }] },
    });
    expect(JSON.stringify(CRONJOB)).toBe(before);
  });

  it('rejects an object without a uid', () => {
    expect(() =>
      buildJobFromCronJob(
        { metadata: { name: 'x', namespace: 'n' } },
        {
          name: 'x-0123456789',
          sourceHashes: HASHES,
          change: { envWrites: [] },
        },
      ),
    ).toThrow(MalformedObjectError);
  });
});

describe('cronJobRunName (ADR 0020)', () => {
  const WINDOW: CronJobRunIdentity = {
    cronJobName: 'report',
    cronJobUid: 'cj-uid',
    previousHashes: `{"configmap/app-config":"${H2}"}`,
    sourceHashes: HASHES,
  };
  const LONG = 'a'.repeat(52);
  // A DNS label or subdomain: lower-case alphanumerics, `-` and `.`, alphanumeric at both ends.
  const VALID_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

  it.each([
    ['a short name keeps its whole prefix', WINDOW, /^report-[0-9a-f]{10}$/],
    ['the longest CronJob name the API allows (52)', { ...WINDOW, cronJobName: LONG }, /^a{52}-/],
    ['a longer name is cut to fit 63', { ...WINDOW, cronJobName: 'b'.repeat(80) }, /^b{52}-/],
    [
      'a cut ending in `-` or `.` drops them',
      { ...WINDOW, cronJobName: `${'c'.repeat(50)}-.-x` },
      /^c{50}-[0-9a-f]{10}$/,
    ],
    ['a CronJob without state yet', { ...WINDOW, previousHashes: undefined }, /^report-/],
  ])('%s', (_case, identity, shape) => {
    const name = cronJobRunName(identity);
    expect(name).toMatch(shape);
    expect(name).toMatch(VALID_NAME);
    expect(name.length).toBeLessThanOrEqual(JOB_NAME_MAX_LENGTH);
  });

  it('the same change window always gives the same name', () => {
    expect(cronJobRunName({ ...WINDOW })).toBe(cronJobRunName(WINDOW));
  });

  it.each([
    ['new hashes', { sourceHashes: `{"secret/db":"${H1}"}` }],
    ['other previous hashes (a change back to an earlier state)', { previousHashes: HASHES }],
    ['no previous hashes', { previousHashes: undefined }],
    ['a CronJob created again under the same name', { cronJobUid: 'cj-uid-2' }],
  ])('%s give another name', (_case, change: Partial<CronJobRunIdentity>) => {
    expect(cronJobRunName({ ...WINDOW, ...change })).not.toBe(cronJobRunName(WINDOW));
  });
});

/** A Job as the API serves it after the Job controller generated its selector. */
function servedJob(manualSelector: boolean): JsonObject {
  const labels = {
    app: 'migrate',
    'controller-uid': 'old-uid',
    'batch.kubernetes.io/controller-uid': 'old-uid',
    'job-name': 'migrate',
    'batch.kubernetes.io/job-name': 'migrate',
  };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: 'migrate',
      namespace: 'team-a',
      uid: 'old-uid',
      resourceVersion: '900',
      creationTimestamp: '2026-01-01T00:00:00Z',
      generation: 1,
      managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
      labels: { app: 'migrate' },
      annotations: {
        'reloader.stakater.com/auto': 'true',
        'kreload.io/baseline': `{"secret/db":"${H2}"}`,
      },
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'o' }],
    },
    spec: {
      ...(manualSelector ? { manualSelector: true } : {}),
      backoffLimit: 1,
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'old-uid' } },
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'app', image: 'registry.example/migrate:3' }],
        },
      },
    },
    status: { succeeded: 1, completionTime: '2026-01-01T00:01:00Z' },
  };
}

describe('buildRecreatedJob (§7.4 item 1)', () => {
  const changes = {
    envWrites: [{ container: 'app', name: 'STAKATER_DB_SECRET', value: H1 }],
    baseline: null,
  };

  it('drops server fields, status, selector and controller labels; applies the change', () => {
    expect(buildRecreatedJob(servedJob(false), changes)).toEqual({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'migrate',
        namespace: 'team-a',
        labels: { app: 'migrate' },
        annotations: { 'reloader.stakater.com/auto': 'true' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'o' }],
      },
      spec: {
        backoffLimit: 1,
        template: {
          metadata: { labels: { app: 'migrate' } },
          spec: {
            restartPolicy: 'Never',
            containers: [
              {
                name: 'app',
                image: 'registry.example/migrate:3',
                env: [{ name: 'STAKATER_DB_SECRET', value: H1 }],
              },
            ],
          },
        },
      },
    });
  });

  it('manualSelector: keeps the selector and the labels (D20)', () => {
    const job = buildRecreatedJob(servedJob(true), changes);
    const served = servedJob(true);
    expect(job.spec).toEqual({
      manualSelector: true,
      backoffLimit: 1,
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'old-uid' } },
      template: {
        metadata: objectAt(served, ['spec', 'template', 'metadata']),
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'app',
              image: 'registry.example/migrate:3',
              env: [{ name: 'STAKATER_DB_SECRET', value: H1 }],
            },
          ],
        },
      },
    });
  });

  it('annotations strategy: PT state in the template, W state on the Job', () => {
    const job = buildRecreatedJob(servedJob(false), {
      envWrites: [],
      lastReloadedFrom: LRF,
      templateSourceHashes: HASHES,
      baseline: `{"secret/other":"${H2}"}`,
    });
    expect(job.metadata).toMatchObject({
      annotations: {
        'reloader.stakater.com/auto': 'true',
        'kreload.io/baseline': `{"secret/other":"${H2}"}`,
      },
    });
    expect(objectAt(job, ['spec', 'template', 'metadata'])).toEqual({
      labels: { app: 'migrate' },
      annotations: {
        'reloader.stakater.com/last-reloaded-from': LRF,
        'kreload.io/source-hashes': HASHES,
      },
    });
  });

  it('never changes the Job object it was given', () => {
    const job = servedJob(false);
    const before = JSON.stringify(job);
    buildRecreatedJob(job, changes);
    expect(JSON.stringify(job)).toBe(before);
  });
});
