import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { WebhookNotification } from '../alerts/webhook-notifier.ts';
import { DEFAULT_ANNOTATION_KEYS, DELETE_MARKER } from '../core/types.ts';
import { aContainer, aWorkload } from '../testing/builders.ts';
import { SYSTEM_TIMERS } from '../time/timers.ts';
import type { SourceChange } from '../watch/source-cache.ts';
import { WebhookMode } from './webhook-mode.ts';

const SYNC_DELAY_MS = 1_000;
const SYNC_MAX_DELAY_MS = 3_500;
const T0 = Date.UTC(2026, 0, 1);

const AUTO_APP = aWorkload('Deployment', 'ns', 'auto-app')
  .withAnnotation(DEFAULT_ANNOTATION_KEYS.auto, 'true')
  .withContainer(aContainer('app').withEnvFrom('configmap', 'cm'))
  .build();
const UNRELATED = aWorkload('Deployment', 'ns', 'plain')
  .withContainer(aContainer('app').withEnvFrom('configmap', 'cm'))
  .build();

function aChange(kind: SourceChange['kind'], name = 'cm', hash = 'h1'): SourceChange {
  return {
    kind,
    ref: { type: 'CONFIGMAP', namespace: 'ns', name },
    uid: `uid-${name}`,
    hash,
    observedAt: Date.now(),
    annotations: {},
    prevAnnotations: {},
  };
}

function aWebhookMode(overrides: { reloadOnCreate?: boolean; reloadOnDelete?: boolean } = {}) {
  const sent: { at: number; notification: WebhookNotification }[] = [];
  const mode = new WebhookMode({
    notify: (notification) => sent.push({ at: Date.now() - T0, notification }),
    timers: SYSTEM_TIMERS,
    syncDelayMs: SYNC_DELAY_MS,
    syncMaxDelayMs: SYNC_MAX_DELAY_MS,
    keys: DEFAULT_ANNOTATION_KEYS,
    autoReloadAll: false,
    reloadOnCreate: overrides.reloadOnCreate ?? false,
    reloadOnDelete: overrides.reloadOnDelete ?? false,
  });
  return { mode, sent };
}

describe('WebhookMode (§13.7)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: T0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('posts once, --sync-delay after the last change, with the latest hash and tracked workloads', () => {
    const { mode, sent } = aWebhookMode();
    mode.observe(aChange('updated', 'cm', 'h1'), [AUTO_APP, UNRELATED]);
    vi.advanceTimersByTime(600);
    mode.observe(aChange('updated', 'cm', 'h2'), [AUTO_APP, UNRELATED]);
    vi.advanceTimersByTime(SYNC_DELAY_MS - 1);
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual([
      {
        at: 600 + SYNC_DELAY_MS,
        notification: {
          event: 'update',
          source: { type: 'CONFIGMAP', namespace: 'ns', name: 'cm' },
          hash: 'h2',
          workloads: [AUTO_APP.ref],
          observedAt: new Date(T0 + 600),
        },
      },
    ]);
    vi.advanceTimersByTime(10 * SYNC_MAX_DELAY_MS);
    expect(sent).toHaveLength(1);
  });

  it('caps a storm of changes at --sync-max-delay after the first', () => {
    const { mode, sent } = aWebhookMode();
    for (let i = 0; i < 10; i++) {
      mode.observe(aChange('updated', 'cm', `h${i}`), [AUTO_APP]);
      vi.advanceTimersByTime(500);
    }
    expect(sent.map((s) => [s.at, s.notification.hash])).toEqual([[SYNC_MAX_DELAY_MS, 'h6']]);
    vi.advanceTimersByTime(SYNC_DELAY_MS);
    expect(sent.map((s) => [s.at, s.notification.hash])).toEqual([
      [SYNC_MAX_DELAY_MS, 'h6'],
      [4_500 + SYNC_DELAY_MS, 'h9'],
    ]);
  });

  it('debounces each source on its own', () => {
    const { mode, sent } = aWebhookMode();
    mode.observe(aChange('updated', 'a'), []);
    vi.advanceTimersByTime(400);
    mode.observe(aChange('updated', 'b'), []);
    vi.advanceTimersByTime(SYNC_DELAY_MS);
    expect(sent.map((s) => [s.at, s.notification.source.name])).toEqual([
      [SYNC_DELAY_MS, 'a'],
      [400 + SYNC_DELAY_MS, 'b'],
    ]);
  });

  it('posts creates and deletes only when --reload-on-create / --reload-on-delete', () => {
    const off = aWebhookMode();
    off.mode.observe(aChange('created', 'new'), [AUTO_APP]);
    off.mode.observe(aChange('deleted', 'gone'), [AUTO_APP]);
    off.mode.observe(aChange('annotations', 'cm'), [AUTO_APP]);
    vi.advanceTimersByTime(SYNC_MAX_DELAY_MS);
    expect(off.sent).toEqual([]);

    const on = aWebhookMode({ reloadOnCreate: true, reloadOnDelete: true });
    on.mode.observe(aChange('created', 'new'), []);
    on.mode.observe(aChange('deleted', 'gone', 'last'), []);
    vi.advanceTimersByTime(SYNC_DELAY_MS);
    expect(on.sent.map((s) => [s.notification.event, s.notification.hash])).toEqual([
      ['create', 'h1'],
      ['delete', DELETE_MARKER],
    ]);
  });

  it('stop drops what is pending', () => {
    const { mode, sent } = aWebhookMode();
    mode.observe(aChange('updated'), [AUTO_APP]);
    mode.stop();
    vi.advanceTimersByTime(SYNC_MAX_DELAY_MS);
    expect(sent).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
