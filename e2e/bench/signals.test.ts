import { describe, expect, it } from 'vitest';
import { fingerprint, hashesNamed, templateSignals } from './signals.ts';

const lookup = {
  envNames: new Map([
    ['STAKATER_CM_A_CONFIGMAP', 'configmap/cm-a'],
    ['STAKATER_DB_SECRET', 'secret/db'],
  ]),
};

function template(details: {
  env?: Record<string, string>;
  annotations?: Record<string, string>;
  init?: Record<string, string>;
}) {
  const env = (values: Record<string, string> = {}) =>
    Object.entries(values).map(([name, value]) => ({ name, value }));
  return {
    metadata: { annotations: details.annotations ?? {} },
    spec: {
      initContainers: details.init ? [{ name: 'init', env: env(details.init) }] : [],
      containers: [{ name: 'app', env: env(details.env) }],
    },
  };
}

const lastReloadedFrom = (type: string, name: string, hash: string): string =>
  JSON.stringify({ type, name, namespace: 'ns', hash, containerRefs: ['app'], observedAt: 1 });

describe('templateSignals', () => {
  it.each([
    {
      name: 'env vars of tracked sources (regular and init containers)',
      tpl: template({
        env: { STAKATER_CM_A_CONFIGMAP: 'h1', OTHER: 'x' },
        init: { STAKATER_DB_SECRET: 's1' },
      }),
      previous: {},
      expected: { 'configmap/cm-a': 'h1', 'secret/db': 's1' },
    },
    {
      name: "Reloader's last-reloaded-from names one source; the other keeps its previous hash",
      tpl: template({
        annotations: {
          'reloader.stakater.com/last-reloaded-from': lastReloadedFrom('SECRET', 'db', 's2'),
        },
      }),
      previous: { 'configmap/cm-a': 'h1' },
      expected: { 'configmap/cm-a': 'h1', 'secret/db': 's2' },
    },
    {
      name: "kreload's source-hashes map (untracked keys ignored)",
      tpl: template({
        annotations: { 'kreload.io/source-hashes': '{"configmap/cm-a":"h3","configmap/zzz":"q"}' },
      }),
      previous: {},
      expected: { 'configmap/cm-a': 'h3' },
    },
    {
      name: 'malformed annotations count as absent',
      tpl: template({
        annotations: {
          'kreload.io/source-hashes': '{',
          'reloader.stakater.com/last-reloaded-from': 'x',
        },
      }),
      previous: { 'configmap/cm-a': 'h1' },
      expected: { 'configmap/cm-a': 'h1' },
    },
    {
      name: 'an env var wins over annotations',
      tpl: template({
        env: { STAKATER_CM_A_CONFIGMAP: 'env' },
        annotations: { 'kreload.io/source-hashes': '{"configmap/cm-a":"annotation"}' },
      }),
      previous: {},
      expected: { 'configmap/cm-a': 'env' },
    },
  ])('$name', ({ tpl, previous, expected }) => {
    const signals = templateSignals(tpl, lookup, new Map(Object.entries(previous)));
    expect(Object.fromEntries(signals)).toEqual(expected);
  });

  it('names every hash a template carries for one source, in any form', () => {
    const tpl = template({
      env: { STAKATER_CM_A_CONFIGMAP: 'old' },
      annotations: {
        'reloader.stakater.com/last-reloaded-from': lastReloadedFrom('CONFIGMAP', 'cm-a', 'new'),
      },
    });
    expect(hashesNamed(tpl, lookup, 'configmap/cm-a')).toEqual(new Set(['old', 'new']));
  });
});

describe('fingerprint', () => {
  it('ignores key order, undefined and null, and tells real changes apart', () => {
    expect(fingerprint({ b: [1, { d: null, c: 2 }], a: 'x', e: undefined })).toBe(
      fingerprint({ a: 'x', b: [1, { c: 2 }] }),
    );
    expect(fingerprint({ a: [1, 2] })).not.toBe(fingerprint({ a: [2, 1] }));
  });
});
