/** ReconcileObserver that records every hook call in order, for exact assertions. */
import type { ReconcileObserver } from '../reconcile/ports.ts';

export type ObservedCall = {
  [Hook in keyof ReconcileObserver]: { hook: Hook; event: Parameters<ReconcileObserver[Hook]>[0] };
}[keyof ReconcileObserver];

export class RecordingObserver implements ReconcileObserver {
  readonly calls: ObservedCall[] = [];

  hooks(): string[] {
    return this.calls.map((call) => call.hook);
  }

  onRolled(event: Parameters<ReconcileObserver['onRolled']>[0]): void {
    this.calls.push({ hook: 'onRolled', event });
  }

  onBaselined(event: Parameters<ReconcileObserver['onBaselined']>[0]): void {
    this.calls.push({ hook: 'onBaselined', event });
  }

  onResumed(event: Parameters<ReconcileObserver['onResumed']>[0]): void {
    this.calls.push({ hook: 'onResumed', event });
  }

  onPauseNotice(event: Parameters<ReconcileObserver['onPauseNotice']>[0]): void {
    this.calls.push({ hook: 'onPauseNotice', event });
  }

  onRecreationRetried(event: Parameters<ReconcileObserver['onRecreationRetried']>[0]): void {
    this.calls.push({ hook: 'onRecreationRetried', event });
  }

  onSnapshots(event: Parameters<ReconcileObserver['onSnapshots']>[0]): void {
    this.calls.push({ hook: 'onSnapshots', event });
  }

  onSkipped(event: Parameters<ReconcileObserver['onSkipped']>[0]): void {
    this.calls.push({ hook: 'onSkipped', event });
  }

  onDryRun(event: Parameters<ReconcileObserver['onDryRun']>[0]): void {
    this.calls.push({ hook: 'onDryRun', event });
  }

  onFailed(event: Parameters<ReconcileObserver['onFailed']>[0]): void {
    this.calls.push({ hook: 'onFailed', event });
  }

  onRetry(event: Parameters<ReconcileObserver['onRetry']>[0]): void {
    this.calls.push({ hook: 'onRetry', event });
  }

  onGone(event: Parameters<ReconcileObserver['onGone']>[0]): void {
    this.calls.push({ hook: 'onGone', event });
  }

  onProblems(event: Parameters<ReconcileObserver['onProblems']>[0]): void {
    this.calls.push({ hook: 'onProblems', event });
  }

  onEviction(event: Parameters<ReconcileObserver['onEviction']>[0]): void {
    this.calls.push({ hook: 'onEviction', event });
  }

  onCollision(event: Parameters<ReconcileObserver['onCollision']>[0]): void {
    this.calls.push({ hook: 'onCollision', event });
  }
}
