import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../config/config-error.ts';
import type { Options } from '../config/parse-options.ts';
import type { Logger } from '../log/logger.ts';
import type { App, CreateApp } from '../app/app-types.ts';
import type { CliIo, ShutdownSignal } from './run.ts';
import { runCli } from './run.ts';

// The shape the lead's app.ts is expected to export must fit CreateApp without a cast.
const leadShapedCreateApp = (
  options: Options,
  deps: { logger: Logger },
): { start(): Promise<void>; stop(reason: string): Promise<void> } => ({
  start: () => {
    deps.logger.info('starting', { strategy: options.reloadStrategy });
    return Promise.resolve();
  },
  stop: () => Promise.resolve(),
});
const fitsCreateApp: CreateApp = leadShapedCreateApp;

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve: (value: T) => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function textSink(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  return { stream, text: () => chunks.join('') };
}

class FakeApp implements App {
  readonly calls: string[] = [];
  readonly started = deferred();
  startResult: Promise<void> = Promise.resolve();
  stopResult: Promise<void> = Promise.resolve();

  start(): Promise<void> {
    this.calls.push('start');
    this.started.resolve();
    return this.startResult;
  }

  stop(reason: string): Promise<void> {
    this.calls.push(`stop:${reason}`);
    return this.stopResult;
  }
}

function harness(argv: string[], env: Record<string, string> = {}) {
  const stdout = textSink();
  const stderr = textSink();
  const app = new FakeApp();
  let signalHandler: ((signal: ShutdownSignal) => void) | undefined;
  let captured: { options: Options; version: string; onFatal: (error: Error) => void } | undefined;
  const createApp: CreateApp = (options, deps) => {
    captured = { options, version: deps.version, onFatal: deps.onFatal };
    deps.logger.info('app created');
    return app;
  };
  const loadCreateApp = vi.fn(() => Promise.resolve(createApp));
  const io: CliIo = {
    argv,
    env: { KUBECONFIG: '/kc', ...env },
    stdout: stdout.stream,
    stderr: stderr.stream,
    readFile: () => Promise.reject(new Error('no files')),
    fileExists: (path) => path === '/kc',
    checkKubeconfigFile: () => undefined,
    version: '1.2.3',
    onShutdownSignal: (handler) => {
      signalHandler = handler;
    },
    loadCreateApp,
    now: () => new Date('2026-01-02T03:04:05Z'),
    fatalStopTimeoutMs: 4000,
  };
  return {
    io,
    app,
    loadCreateApp,
    stdout: stdout.text,
    stderr: stderr.text,
    signal: (signal: ShutdownSignal) => {
      signalHandler?.(signal);
    },
    fatal: (error: Error) => {
      captured?.onFatal(error);
    },
    options: () => captured?.options,
    appVersion: () => captured?.version,
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('runCli: info and subcommands', () => {
  it('prints the help and exits 0', async () => {
    const h = harness(['--dry-run', '--help']);
    expect(await runCli(h.io)).toBe(0);
    expect(h.stdout()).toContain('--resource-label-selector');
    expect(h.loadCreateApp).not.toHaveBeenCalled();
  });

  it('prints the version and exits 0', async () => {
    const h = harness(['--version']);
    expect(await runCli(h.io)).toBe(0);
    expect(h.stdout()).toBe('kreload 1.2.3\n');
  });

  it('dispatches hash', async () => {
    const h = harness(['hash']);
    expect(await runCli(h.io)).toBe(2);
    expect(h.stderr()).toContain('kreload hash: -f <manifest.yaml> is required');
  });
});

describe('runCli: invalid configuration (§12.6)', () => {
  it('prints every problem on its own line and exits 2 before building anything', async () => {
    const h = harness(['--sync-delay=5', '--bogus'], { KRELOAD_WORKER_THREADS: '99' });
    expect(await runCli(h.io)).toBe(2);
    expect(h.stderr()).toBe(
      [
        'kreload: invalid configuration: --bogus: unknown flag',
        'kreload: invalid configuration: --sync-delay: invalid duration "5": expected Go syntax such as 300ms, 2s, 1m30s or 1.5h',
        'kreload: invalid configuration: KRELOAD_WORKER_THREADS: 99 is out of range 1–64',
        '',
      ].join('\n'),
    );
    expect(h.loadCreateApp).not.toHaveBeenCalled();
  });

  it('treats a missing kubeconfig as invalid configuration', async () => {
    const h = harness(['--kubeconfig=/missing']);
    expect(await runCli(h.io)).toBe(2);
    expect(h.stderr()).toBe(
      'kreload: invalid configuration: --kubeconfig: file "/missing" does not exist\n',
    );
  });

  it('treats an unusable kubeconfig as invalid configuration', async () => {
    const h = harness([]);
    expect(
      await runCli({ ...h.io, checkKubeconfigFile: () => '"/kc" has no current-context' }),
    ).toBe(2);
    expect(h.stderr()).toBe(
      'kreload: invalid configuration: KUBECONFIG: "/kc" has no current-context\n',
    );
  });
});

describe('runCli: controller lifecycle (§13.5)', () => {
  it('starts the app with the parsed options, logs the startup, and stops on SIGTERM with exit 0', async () => {
    const h = harness([
      '--log-format=json',
      '--namespaces=a',
      '--namespaces-to-ignore=b',
      '--sync-after-restart',
    ]);
    const exit = runCli(h.io);
    await h.app.started.promise;
    expect(h.options()?.scope.namespaces).toEqual(['a']);
    expect(h.appVersion()).toBe('1.2.3');
    h.signal('SIGTERM');
    expect(await exit).toBe(0);
    expect(h.app.calls).toEqual(['start', 'stop:SIGTERM']);
    const lines = h
      .stderr()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      ['info', 'starting kreload'],
      ['warning', '--namespaces-to-ignore: ignored because --namespaces selects scoped mode'],
      ['info', '--sync-after-restart: ignored: restart-safe reconciliation is always on'],
      ['info', 'app created'],
      ['info', 'shutting down'],
      ['info', 'stopped'],
    ]);
    expect(lines[0]).toMatchObject({
      version: '1.2.3',
      mode: 'scoped',
      namespaces: 'a',
      reloadStrategy: 'env-vars',
    });
  });

  it('logs the webhook URL redacted', async () => {
    const h = harness(['--webhook-url=https://hooks.example.com/secret-token']);
    const exit = runCli(h.io);
    await h.app.started.promise;
    h.signal('SIGINT');
    expect(await exit).toBe(0);
    expect(h.stderr()).toContain('webhook="https://hooks.example.com/REDACTED"');
    expect(h.stderr()).not.toContain('secret-token');
  });

  it('handles a signal that arrives while the app is still starting', async () => {
    const h = harness([]);
    h.app.startResult = new Promise(() => undefined);
    const exit = runCli(h.io);
    await h.app.started.promise;
    h.signal('SIGINT');
    expect(await exit).toBe(0);
    expect(h.app.calls).toEqual(['start', 'stop:SIGINT']);
  });

  it('exits 1 on a fatal error from the app, after stopping it', async () => {
    const h = harness([]);
    const exit = runCli(h.io);
    await h.app.started.promise;
    h.fatal(new Error('lost leadership'));
    expect(await exit).toBe(1);
    expect(h.app.calls).toEqual(['start', 'stop:fatal']);
    expect(h.stderr()).toContain('level=error msg="fatal error, exiting" error="lost leadership"');
  });

  it('does not wait longer than the bound for a stop after a fatal error', async () => {
    vi.useFakeTimers();
    const h = harness([]);
    h.app.stopResult = new Promise(() => undefined);
    const exit = runCli(h.io);
    await h.app.started.promise;
    h.fatal(new Error('lost leadership'));
    await vi.advanceTimersByTimeAsync(3999);
    let settled = false;
    void exit.then(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await exit).toBe(1);
  });

  it('exits 1 after 13 s when the stop after SIGTERM never finishes (hung write or Lease PUT)', async () => {
    vi.useFakeTimers();
    const h = harness([]);
    h.app.stopResult = new Promise(() => undefined);
    const exit = runCli(h.io);
    await h.app.started.promise;
    h.signal('SIGTERM');
    let settled = false;
    void exit.then(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(12_999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await exit).toBe(1);
    expect(h.stderr()).toContain(
      'msg="stop did not finish in time, exiting anyway" timeoutMs=13000',
    );
  });

  it('exits 1 without waiting when a second signal arrives during the stop', async () => {
    const h = harness([]);
    h.app.stopResult = new Promise(() => undefined);
    const exit = runCli(h.io);
    await h.app.started.promise;
    h.signal('SIGTERM');
    h.signal('SIGTERM');
    expect(await exit).toBe(1);
    expect(h.stderr()).toContain('second signal');
  });

  it('exits 1 when the app fails to start', async () => {
    const h = harness([]);
    h.app.startResult = Promise.reject(new Error('cannot listen on :9090'));
    expect(await runCli(h.io)).toBe(1);
    expect(h.app.calls).toEqual(['start', 'stop:start failed']);
    expect(h.stderr()).toContain('msg="start failed" error="cannot listen on :9090"');
  });

  it('exits 2 when the app rejects its configuration at start', async () => {
    const h = harness([]);
    h.app.startResult = Promise.reject(
      new ConfigError(['--kubeconfig: context "x" has no server']),
    );
    expect(await runCli(h.io)).toBe(2);
    expect(h.stderr()).toContain(
      'kreload: invalid configuration: --kubeconfig: context "x" has no server\n',
    );
  });

  it('accepts a createApp shaped like the one app.ts will export', () => {
    expect(typeof fitsCreateApp).toBe('function');
  });
});
