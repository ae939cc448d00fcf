// Shopify's toxiproxy between kreload and kube-apiserver: the server binary built from the Go module
// proxy by scripts/toxiproxy.sh, and a typed client for the part of its HTTP API the fault suite
// uses (proxies, toxics). The API and every proxy listen on 127.0.0.1 only. Toxics act on TCP
// bytes, so TLS passes through untouched and kreload still verifies kube-apiserver's certificate
// (issued for 127.0.0.1, whatever the port).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT, RUNS_DIR } from '../cluster/paths.ts';
import { freeLoopbackPorts } from '../cluster/ports.ts';
import { RunProcesses, tailFile, type SpawnedProcess } from '../cluster/processes.ts';
import { PollGiveUpError, PollTimeoutError, pollUntil } from '../harness/poll.ts';

export const TOXIPROXY_BIN_ENV = 'KRELOAD_E2E_TOXIPROXY';
const BUILD_SCRIPT = path.join(REPO_ROOT, 'scripts', 'toxiproxy.sh');
const READY_TIMEOUT_MS = 15_000;

/** Which half of a proxied connection a toxic acts on: `downstream` is server → client. */
export type ToxicStream = 'upstream' | 'downstream';

/** The toxics the suite uses, with the attributes toxiproxy v2 reads (times in ms, rate in KB/s). */
export type ToxicSpec =
  | { readonly type: 'latency'; readonly attributes: { latency: number; jitter: number } }
  | { readonly type: 'bandwidth'; readonly attributes: { rate: number } }
  /** Drops the data; closes the connection after `timeout` ms (0: never, until removed). */
  | { readonly type: 'timeout'; readonly attributes: { timeout: number } }
  /** Closes with a TCP RST after `timeout` ms. */
  | { readonly type: 'reset_peer'; readonly attributes: { timeout: number } }
  /** Closes the connection after `bytes` bytes went through. */
  | { readonly type: 'limit_data'; readonly attributes: { bytes: number } };

export interface Toxic {
  readonly name: string;
  readonly stream: ToxicStream;
  /** Share of connections affected, 0..1. */
  readonly toxicity?: number;
  readonly spec: ToxicSpec;
}

export class ToxiproxyError extends Error {
  override readonly name = 'ToxiproxyError';
}

/** The binary: `$KRELOAD_E2E_TOXIPROXY` if set, else what scripts/toxiproxy.sh prints last. */
export async function resolveToxiproxyBinary(): Promise<string> {
  const fromEnv = process.env[TOXIPROXY_BIN_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return path.resolve(fromEnv);
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [BUILD_SCRIPT], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.once('error', (error) => {
      reject(new ToxiproxyError(`could not run bash ${BUILD_SCRIPT}`, { cause: error }));
    });
    child.once('close', (code) => {
      const lastLine = stdout.trimEnd().split('\n').at(-1) ?? '';
      if (code === 0 && lastLine !== '') resolve(lastLine);
      else reject(new ToxiproxyError(`bash ${BUILD_SCRIPT} failed with exit code ${String(code)}`));
    });
  });
}

/** One proxy of the server: a loopback listener forwarding to `upstream`. */
export class ToxiproxyProxy {
  readonly name: string;
  readonly listenPort: number;
  readonly #api: ToxiproxyApi;

  constructor(deps: { name: string; listenPort: number; api: ToxiproxyApi }) {
    this.name = deps.name;
    this.listenPort = deps.listenPort;
    this.#api = deps.api;
  }

  async addToxic(toxic: Toxic): Promise<void> {
    await this.#api.request('POST', `/proxies/${this.name}/toxics`, {
      name: toxic.name,
      type: toxic.spec.type,
      stream: toxic.stream,
      toxicity: toxic.toxicity ?? 1,
      attributes: toxic.spec.attributes,
    });
  }

  async removeToxic(name: string): Promise<void> {
    await this.#api.request('DELETE', `/proxies/${this.name}/toxics/${name}`);
  }

  /** A disabled proxy refuses connections and closes every open one. */
  async setEnabled(enabled: boolean): Promise<void> {
    await this.#api.request('POST', `/proxies/${this.name}`, { enabled });
  }

  /** Runs `body` with `toxics` in place; removes them after, also when `body` throws. */
  async withToxics<T>(toxics: readonly Toxic[], body: () => Promise<T>): Promise<T> {
    const added: Toxic[] = [];
    try {
      for (const toxic of toxics) {
        await this.addToxic(toxic);
        added.push(toxic);
      }
      return await body();
    } finally {
      for (const toxic of added) await this.removeToxic(toxic.name);
    }
  }
}

/** toxiproxy's HTTP API on a loopback port. */
export class ToxiproxyApi {
  readonly #base: string;

  constructor(deps: { port: number }) {
    this.#base = `http://127.0.0.1:${deps.port}`;
  }

  async request(method: string, pathname: string, body?: object): Promise<unknown> {
    const response = await fetch(`${this.#base}${pathname}`, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(5000),
    });
    const text = await response.text();
    if (!response.ok) {
      throw new ToxiproxyError(
        `toxiproxy ${method} ${pathname} answered ${response.status}: ${text.trim()}`,
      );
    }
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  }

  async version(): Promise<string> {
    const response = await fetch(`${this.#base}/version`, { signal: AbortSignal.timeout(2000) });
    return (await response.text()).trim();
  }
}

/** A toxiproxy-server process of this run; stop() kills it and deletes its directory. */
export class ToxiproxyServer {
  readonly api: ToxiproxyApi;
  readonly #processes: RunProcesses;
  readonly #runDir: string;

  constructor(deps: { api: ToxiproxyApi; processes: RunProcesses; runDir: string }) {
    this.api = deps.api;
    this.#processes = deps.processes;
    this.#runDir = deps.runDir;
  }

  /** A proxy on a free loopback port to `upstream` (host:port). */
  async createProxy(name: string, upstream: string): Promise<ToxiproxyProxy> {
    const [listenPort] = await freeLoopbackPorts(1);
    if (listenPort === undefined) throw new ToxiproxyError('no free loopback port for a proxy');
    await this.api.request('POST', '/proxies', {
      name,
      listen: `127.0.0.1:${listenPort}`,
      upstream,
      enabled: true,
    });
    return new ToxiproxyProxy({ name, listenPort, api: this.api });
  }

  async stop(): Promise<void> {
    await this.#processes.stopAll();
    await rm(this.#runDir, { recursive: true, force: true });
  }
}

/**
 * Starts toxiproxy-server with its API on a free loopback port. Its pids.json lives in a run
 * directory of its own under .cache/runs, so `cli.ts clean` stops it after a crashed launcher.
 */
export async function startToxiproxy(binary: string): Promise<ToxiproxyServer> {
  const runDir = path.join(RUNS_DIR, `toxiproxy-${randomBytes(3).toString('hex')}`);
  await mkdir(runDir, { recursive: true, mode: 0o700 });
  const processes = new RunProcesses({ runDir });
  const [port] = await freeLoopbackPorts(1);
  if (port === undefined) throw new ToxiproxyError('no free loopback port for the toxiproxy API');
  let started: SpawnedProcess;
  try {
    started = await processes.spawn({
      name: 'toxiproxy-server',
      command: binary,
      args: ['-host=127.0.0.1', `-port=${port}`],
      env: { ...process.env, LOG_LEVEL: 'warn' },
    });
  } catch (error) {
    await rm(runDir, { recursive: true, force: true });
    throw error;
  }
  const api = new ToxiproxyApi({ port });
  try {
    await pollUntil(
      async () => {
        if (started.exitInfo !== undefined) throw new PollGiveUpError('toxiproxy-server exited');
        return (await api.version()) !== '';
      },
      { timeoutMs: READY_TIMEOUT_MS, describe: `toxiproxy's API on 127.0.0.1:${port}` },
    );
  } catch (error) {
    await processes.stopAll();
    if (!(error instanceof PollTimeoutError || error instanceof PollGiveUpError)) throw error;
    throw new ToxiproxyError(
      `toxiproxy-server did not start: ${error.message}\ncommand: ${started.commandLine}\n` +
        `--- log ---\n${tailFile(started.spec.logPath, 30)}`,
      { cause: error },
    );
  }
  return new ToxiproxyServer({ api, processes, runDir });
}
