import { describe, expect, it } from 'vitest';
import { DEFAULT_ANNOTATION_KEYS } from '../core/types.ts';
import type { PodStatusView } from './ports.ts';
import { SourceCache, type SourceCacheEvent } from './source-cache.ts';
import {
  desiredPodStatus,
  podStatusSink,
  providerClassSink,
  SpcDesiredState,
  type PodStatusEntry,
} from './spc-desired-state.ts';

const H1 = '1111111111111111111111111111111111111111';
const H2 = '2222222222222222222222222222222222222222';
const H3 = '3333333333333333333333333333333333333333';
const MATCH = { [DEFAULT_ANNOTATION_KEYS.match]: 'true' };

function pod(name: string, hash: string, created = '2026-01-01T00:00:00Z'): PodStatusView {
  return {
    namespace: 'ns',
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    creationTimestamp: created,
    className: 'vault',
    hash,
  };
}

const vaultClass = { namespace: 'ns', name: 'vault', annotations: MATCH };

function setup() {
  let now = 1_000;
  const events: SourceCacheEvent[] = [];
  const cache = new SourceCache({
    type: 'SECRETPROVIDERCLASS',
    clock: { now: () => now },
    notify: (event) => events.push(event),
  });
  const state = new SpcDesiredState({ cache });
  return {
    cache,
    state,
    pods: podStatusSink(state),
    classes: providerClassSink(state),
    events,
    summary: () =>
      events.map((e) => `${e.kind} ${e.ref.name}${'hash' in e ? ` ${e.hash.slice(0, 1)}` : ''}`),
    at: (t: number) => {
      now = t;
    },
  };
}

describe('desiredPodStatus (§4.4 item 1)', () => {
  const entry = (view: PodStatusView, seenAt = 0): PodStatusEntry => ({ view, seenAt });
  it.each([
    ['none', [], undefined],
    [
      'newest creationTimestamp',
      [entry(pod('a', H1, '2026-01-02T00:00:00Z')), entry(pod('b', H2, '2026-01-01T00:00:00Z'))],
      'a',
    ],
    ['tie → greatest name', [entry(pod('a', H1)), entry(pod('c', H3)), entry(pod('b', H2))], 'c'],
    [
      'most recently seen beats newer',
      [
        entry(pod('old', H1, '2020-01-01T00:00:00Z'), 2),
        entry(pod('new', H2, '2026-01-01T00:00:00Z'), 1),
      ],
      'old',
    ],
    ['seen beats never seen', [entry(pod('z', H1)), entry(pod('a', H2), 1)], 'a'],
  ] as const)('%s', (_name, entries, expected) => {
    expect(desiredPodStatus(entries)?.name).toBe(expected);
  });
});

describe('SpcDesiredState', () => {
  it('seeds the cache only once both initial lists have arrived, silently', () => {
    const { cache, pods, classes, events, state } = setup();
    pods.replace([pod('a', H1, '2026-01-02T00:00:00Z'), pod('b', H2)]);
    expect(cache.isSynced).toBe(false);
    expect(state.isSynced).toBe(false);
    classes.replace([vaultClass]);
    expect(state.isSynced).toBe(true);
    expect(events).toEqual([]);
    expect(cache.get('ns', 'vault')).toEqual({
      view: {
        ref: { type: 'SECRETPROVIDERCLASS', namespace: 'ns', name: 'vault' },
        uid: 'secretproviderclass:ns/vault',
        resourceVersion: '1',
        creationTimestamp: '2026-01-02T00:00:00Z',
        hash: H1,
        annotations: MATCH,
      },
      firstObserved: 1_000,
      lastChange: undefined,
    });
  });

  it('the source view carries the class labels when kept; a label change is a labels event', () => {
    const { cache, pods, classes, events, at } = setup();
    pods.replace([pod('a', H1)]);
    classes.replace([{ ...vaultClass, labels: { team: 'web' } }]);
    expect(cache.get('ns', 'vault')?.view.labels).toEqual({ team: 'web' });
    at(2_000);
    classes.upsert({ ...vaultClass, labels: { team: 'api' } });
    expect(events).toEqual([
      {
        kind: 'labels',
        ref: { type: 'SECRETPROVIDERCLASS', namespace: 'ns', name: 'vault' },
        uid: 'secretproviderclass:ns/vault',
        observedAt: 2_000,
        labels: { team: 'api' },
        prevLabels: { team: 'web' },
      },
    ]);
    expect(cache.get('ns', 'vault')?.lastChange).toBeUndefined();
  });

  it('follows the most recently changed SPCPS: a rotation changes the desired hash once', () => {
    const { cache, pods, classes, summary, at } = setup();
    pods.replace([pod('a', H1), pod('b', H1)]);
    classes.replace([vaultClass]);
    at(2_000);
    pods.upsert({ ...pod('a', H2), resourceVersion: '2' });
    at(3_000);
    pods.upsert({ ...pod('b', H2), resourceVersion: '3' });
    expect(summary()).toEqual(['updated vault 2', 'unchanged vault']);
    expect(cache.get('ns', 'vault')?.lastChange).toBe(2_000);
  });

  it('a new pod whose SPCPS appears with other content becomes the desired state', () => {
    const { cache, pods, classes, summary } = setup();
    pods.replace([pod('z', H1)]);
    classes.replace([vaultClass]);
    pods.upsert(pod('a', H3, '2020-01-01T00:00:00Z'));
    expect(summary()).toEqual(['updated vault 3']);
    expect(cache.get('ns', 'vault')?.view.hash).toBe(H3);
  });

  it('unknown → known is a creation, not a change; no SPCPS left is a deletion', () => {
    const { cache, pods, classes, summary, at } = setup();
    pods.replace([]);
    classes.replace([vaultClass]);
    at(2_000);
    pods.upsert(pod('a', H1));
    expect(cache.get('ns', 'vault')).toMatchObject({ firstObserved: 2_000, lastChange: undefined });
    pods.upsert(pod('b', H1));
    pods.remove(pod('a', H1));
    pods.remove(pod('b', H1));
    pods.remove(pod('b', H1));
    expect(summary()).toEqual(['created vault 1', 'deleted vault 1']);
    expect(cache.get('ns', 'vault')).toBeUndefined();
  });

  it('takes S from the SecretProviderClass object, empty while it is not visible', () => {
    const { cache, pods, classes, summary } = setup();
    pods.replace([pod('a', H1)]);
    classes.replace([]);
    expect(cache.get('ns', 'vault')?.view.annotations).toEqual({});
    classes.upsert(vaultClass);
    classes.remove(vaultClass);
    classes.replace([vaultClass]);
    classes.replace([]);
    expect(summary()).toEqual([
      'annotations vault 1',
      'annotations vault 1',
      'annotations vault 1',
      'annotations vault 1',
    ]);
    expect(cache.get('ns', 'vault')?.view.annotations).toEqual({});
  });

  it('a relist diffs SPCPS by UID', () => {
    const { pods, classes, summary } = setup();
    pods.replace([pod('a', H1), pod('b', H1)]);
    classes.replace([vaultClass]);
    pods.replace([pod('a', H1), { ...pod('b', H2), uid: 'recreated' }]);
    pods.replace([]);
    expect(summary()).toEqual(['updated vault 2', 'deleted vault 2']);
  });

  it('keeps classes apart and moves an SPCPS whose class changes', () => {
    const { cache, pods, classes } = setup();
    pods.replace([pod('a', H1), { ...pod('b', H2), className: 'other' }]);
    classes.replace([]);
    expect([...cache.namesInNamespace('ns')].sort()).toEqual(['other', 'vault']);
    pods.upsert({ ...pod('b', H2), className: 'vault' });
    expect(cache.namesInNamespace('ns')).toEqual(['vault']);
    expect(cache.get('ns', 'vault')?.view.hash).toBe(H2);
  });
});
