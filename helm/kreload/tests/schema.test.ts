// values.schema.json: unknown and misplaced keys fail, values are type-checked, and the schema and
// values.yaml describe the same keys.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  HELM_BUILD_TIMEOUT_MS,
  chartDir,
  isRecord,
  locateHelm,
  parseYaml,
  templateChart,
} from './chart-harness.ts';

interface Rejection {
  why: string;
  values: Record<string, unknown>;
  /** Part of helm's schema error: the JSON pointer of the offending location. */
  at: string;
}

const REJECTED: Rejection[] = [
  {
    why: 'an unknown top-level key',
    values: { reloadr: { enableHA: true } },
    at: "at '': additional properties 'reloadr'",
  },
  {
    why: 'an unknown key under reloader',
    values: { reloader: { enableHa: true } },
    at: "at '/reloader': additional properties 'enableHa'",
  },
  {
    why: 'a controller option misplaced under deployment',
    values: { reloader: { deployment: { enableHA: true } } },
    at: "at '/reloader/deployment': additional properties 'enableHA'",
  },
  {
    why: 'a reloader.* option misplaced at the top level',
    values: { enableHA: true },
    at: "additional properties 'enableHA'",
  },
  {
    why: 'an unknown annotation override',
    values: { reloader: { custom_annotations: { reload: 'example.com/reload' } } },
    at: "at '/reloader/custom_annotations': additional properties 'reload'",
  },
  {
    why: 'an unknown container security context field',
    values: {
      reloader: { deployment: { containerSecurityContext: { readOnlyRootFileSystem: true } } },
    },
    at: "at '/reloader/deployment/containerSecurityContext'",
  },
  {
    why: 'an unknown reload strategy',
    values: { reloader: { reloadStrategy: 'restart' } },
    at: "at '/reloader/reloadStrategy'",
  },
  {
    why: 'a duration without a unit',
    values: { reloader: { syncDelay: '5' } },
    at: "at '/reloader/syncDelay'",
  },
  {
    why: 'a duration in days',
    values: { reloader: { resyncPeriod: '1d' } },
    at: "at '/reloader/resyncPeriod'",
  },
  {
    why: 'zero worker threads',
    values: { reloader: { workerThreads: 0 } },
    at: "at '/reloader/workerThreads'",
  },
  {
    why: 'an unknown log level',
    values: { reloader: { logLevel: 'verbose' } },
    at: "at '/reloader/logLevel'",
  },
  {
    why: 'an unknown log format',
    values: { reloader: { logFormat: 'yaml' } },
    at: "at '/reloader/logFormat'",
  },
  {
    why: 'a string bool',
    values: { reloader: { reloadOnCreate: 'true' } },
    at: "at '/reloader/reloadOnCreate'",
  },
  {
    why: 'an invalid annotation key',
    values: { reloader: { custom_annotations: { auto: 'not a key' } } },
    at: "at '/reloader/custom_annotations/auto'",
  },
  {
    why: 'a relative webhook URL',
    values: { reloader: { webhookUrl: 'hooks/reload' } },
    at: "at '/reloader/webhookUrl'",
  },
  {
    why: 'a port out of range',
    values: { reloader: { metricsPort: 70000 } },
    at: "at '/reloader/metricsPort'",
  },
];

const ACCEPTED: { why: string; values: Record<string, unknown> }[] = [
  { why: 'a zero sync delay given as a number', values: { reloader: { syncDelay: 0 } } },
  {
    why: 'compound Go durations',
    values: { reloader: { syncMaxDelay: '1m30s', resyncPeriod: '1.5h' } },
  },
  { why: 'namespaces as a string', values: { reloader: { namespaces: 'team-a,team-b' } } },
  {
    why: 'selectors as a list',
    values: { reloader: { namespaceSelector: ['env in (a,b)', '!legacy'] } },
  },
  {
    why: 'a null that removes a default',
    values: { reloader: { deployment: { securityContext: { runAsUser: null } } } },
  },
  {
    why: "Reloader's readOnlyRootFileSystem, true and false",
    values: { reloader: { readOnlyRootFileSystem: false } },
  },
  {
    why: 'a log level in capitals, as Reloader takes it',
    values: { reloader: { logLevel: 'INFO' } },
  },
  {
    why: "the nulls of Reloader's default values file",
    values: {
      reloader: { deployment: { hostUsers: null, nodeSelector: null, env: { open: null } } },
    },
  },
  {
    why: 'pull secrets as names',
    values: { global: { imagePullSecrets: ['registry', { name: 'other' }] } },
  },
];

describe('values.schema.json', () => {
  let helm = '';

  beforeAll(async () => {
    helm = await locateHelm();
  }, HELM_BUILD_TIMEOUT_MS);

  it.each(REJECTED)('rejects $why', async ({ values, at }) => {
    const result = await templateChart(helm, { values });
    expect(result.ok).toBe(false);
    expect(result.stderr).toContain(at);
  });

  it.each(ACCEPTED)('accepts $why', async ({ values }) => {
    const result = await templateChart(helm, { values });
    expect(result.stderr).toBe('');
    expect(result.ok).toBe(true);
  });
});

describe('values.schema.json structure', () => {
  let schema: unknown;
  let values: unknown;

  beforeAll(async () => {
    schema = JSON.parse(await readFile(join(chartDir, 'values.schema.json'), 'utf8'));
    values = parseYaml(await readFile(join(chartDir, 'values.yaml'), 'utf8'));
  });

  /**
   * Every object schema either closes its properties or is a map whose values are themselves
   * constrained. Kubernetes objects passed through to the API server (affinity, tolerations, …)
   * are the only open ones, and say so in `$comment`.
   */
  function openObjects(node: unknown, path: string): string[] {
    if (Array.isArray(node)) {
      return node.flatMap((child, index) => openObjects(child, `${path}[${String(index)}]`));
    }
    if (!isRecord(node)) {
      return [];
    }
    const isPassthrough =
      typeof node.$comment === 'string' && node.$comment.startsWith('passthrough:');
    const isOpen =
      node.type === 'object' &&
      !isPassthrough &&
      !(node.additionalProperties === false || isRecord(node.additionalProperties));
    const children = Object.entries(node).flatMap(([key, child]) =>
      openObjects(child, `${path}/${key}`),
    );
    return isOpen ? [path, ...children] : children;
  }

  it('closes every object that is not a Kubernetes passthrough', () => {
    expect(openObjects(schema, '#')).toEqual([]);
  });

  /** Kubernetes fields that values.yaml sets only in part; the schema lists all the chart accepts. */
  const SPARSE = new Set([
    // Alias block and Reloader's older image layout: empty unless a values file uses them.
    '.config',
    '.reloader.deployment.image',
    '.reloader.service',
    // Set on the objects only when given (Reloader's hasKey / kindIs checks).
    '.reloader.deployment.hostUsers',
    '.reloader.deployment.automountServiceAccountToken',
    '.reloader.serviceAccount.automountServiceAccountToken',
    '.reloader.verticalPodAutoscaler.updatePolicy',
    '.reloader.deployment.securityContext',
    '.reloader.deployment.containerSecurityContext',
    '.reloader.deployment.livenessProbe',
    '.reloader.deployment.readinessProbe',
    // Reloader 2.0's enterprise keys, accepted and ignored (values.yaml mentions them in a comment).
    '.enterprise',
    '.global.consoleHost',
    '.global.gatewayHost',
    '.global.gatewayScheme',
    '.global.host',
    '.global.gatewayBasePath',
    '.global.ingressScheme',
  ]);

  /** Paths of schema properties that values.yaml does not set, where values.yaml has the parent. */
  function undocumented(schemaNode: unknown, valuesNode: unknown, path: string): string[] {
    if (
      SPARSE.has(path) ||
      !isRecord(schemaNode) ||
      !isRecord(schemaNode.properties) ||
      !isRecord(valuesNode)
    ) {
      return [];
    }
    return Object.entries(schemaNode.properties).flatMap(([key, child]) =>
      key in valuesNode
        ? undocumented(child, valuesNode[key], `${path}.${key}`)
        : SPARSE.has(`${path}.${key}`)
          ? []
          : [`${path}.${key}`],
    );
  }

  it('lists every schema property in values.yaml with its default', () => {
    expect(undocumented(schema, values, '')).toEqual([]);
  });
});
