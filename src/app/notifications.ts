/**
 * What kreload tells the outside besides the workload writes: Kubernetes Events with their fan-out
 * summaries, alert webhooks, and the `--webhook-url` mode that posts changes instead of rolling.
 * Each sends only while the leadership gate allows it.
 */
import { sinkWithStructure } from '../alerts/alert-format.ts';
import { AlertSender } from '../alerts/alert-sender.ts';
import { createHttpTransport } from '../alerts/http-transport.ts';
import { WebhookNotifier } from '../alerts/webhook-notifier.ts';
import type { Options } from '../config/parse-options.ts';
import { WebhookMode } from '../controller/webhook-mode.ts';
import { EventRecorder } from '../events/event-recorder.ts';
import { FanoutTracker } from '../events/fanout-tracker.ts';
import { EventClient } from '../kube/event-client.ts';
import type { KubeTransport } from '../kube/transport.ts';
import { SYSTEM_CLOCK, SYSTEM_TIMERS } from '../time/timers.ts';
import type { LeadershipGate } from '../leader/leadership-gate.ts';
import type { Logger } from '../log/logger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { Notifications, WorkInFlight } from './pipeline.ts';

/** How long an Event waits at most for workload writes in flight to finish (ADR 0015). */
const EVENTS_YIELD_MAX_MS = 2_000;

export interface NotifyContext {
  readonly options: Options;
  readonly transport: KubeTransport;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly gate: LeadershipGate;
}

export function createEventNotifications(
  context: NotifyContext,
  work: WorkInFlight,
): Notifications {
  const { options, logger, gate } = context;
  const events = new EventRecorder({
    sink: new EventClient({ transport: context.transport }),
    clock: SYSTEM_CLOCK,
    component: 'kreload',
    instance: options.podName ?? 'kreload',
    canWrite: () => gate.mayWrite(),
    yieldTo: () => work.whenNoWorkInFlight(EVENTS_YIELD_MAX_MS),
    onError: (error) => {
      logger.warn('cannot write Event', {
        error: error.cause instanceof Error ? error.cause.message : error.message,
      });
    },
  });
  return { events, fanouts: new FanoutTracker({ events, clock: SYSTEM_CLOCK }) };
}

/** `--alert-on-reload`: one webhook per roll, started here. */
export function createAlerts(context: NotifyContext): AlertSender | undefined {
  const { alerts } = context.options;
  if (!alerts.enabled || alerts.webhookUrl === undefined) return undefined;
  const transport = createHttpTransport({ proxyUrl: alerts.proxy });
  const sender = new AlertSender({
    url: alerts.webhookUrl,
    sink: sinkWithStructure(alerts.sink, alerts.structured),
    additionalInfo: alerts.additionalInfo,
    fetch: transport.fetch,
    timers: SYSTEM_TIMERS,
    errors: context.metrics,
    onFailure: (error) => {
      context.logger.warn('alert not delivered', { error: error.message });
    },
    canSend: () => context.gate.mayWrite(),
  });
  sender.start();
  return sender;
}

/** `--webhook-url` mode and its notifier, started here; `stop` ends both. */
export function createWebhookMode(
  context: NotifyContext,
): { readonly mode: WebhookMode; stop(): Promise<void> } | undefined {
  const { options, gate } = context;
  if (options.webhookUrl === undefined) return undefined;
  const transport = createHttpTransport({});
  const notifier = new WebhookNotifier({
    url: options.webhookUrl,
    fetch: transport.fetch,
    timers: SYSTEM_TIMERS,
    errors: context.metrics,
    onFailure: (error) => {
      context.logger.warn('webhook not delivered', { error: error.message });
    },
    canSend: () => gate.leading,
  });
  notifier.start();
  const mode = new WebhookMode({
    notify: (notification) => {
      notifier.notify(notification);
    },
    timers: SYSTEM_TIMERS,
    syncDelayMs: options.syncDelay,
    syncMaxDelayMs: options.syncMaxDelay,
    keys: options.annotationKeys,
    autoReloadAll: options.autoReloadAll,
    reloadOnCreate: options.reloadOnCreate,
    reloadOnDelete: options.reloadOnDelete,
  });
  return {
    mode,
    stop: async () => {
      await notifier.stop();
      mode.stop();
    },
  };
}
