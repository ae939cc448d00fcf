import { spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** What pids.json remembers about each process, enough to stop it from another process later. */
export interface RecordedProcess {
  readonly name: string;
  readonly pid: number;
  /** argv[0]: checked against /proc/<pid>/cmdline so a reused PID is never signalled. */
  readonly command: string;
}

export interface PidsFile {
  /** PID of the launcher (CLI or vitest) that owns the run. */
  readonly owner: number;
  readonly runDir: string;
  readonly processes: readonly RecordedProcess[];
}

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface SpawnSpec {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly logPath: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
}

export type StopOutcome = 'already-gone' | 'terminated' | 'killed' | 'pid-reused';

export class ProcessStopError extends Error {
  override readonly name = 'ProcessStopError';
}

const STOP_GRACE_MS = 10_000;
const KILL_WAIT_MS = 5_000;
const PIDS_FILE = 'pids.json';

/** A process started in its own process group, with stdout and stderr appended to a log file. */
export class SpawnedProcess {
  readonly #child: ChildProcess;
  readonly #exit: Promise<ExitInfo>;
  #exitInfo: ExitInfo | undefined;
  readonly spec: SpawnSpec;
  readonly pid: number;

  constructor(deps: { spec: SpawnSpec; child: ChildProcess; pid: number }) {
    this.spec = deps.spec;
    this.#child = deps.child;
    this.pid = deps.pid;
    this.#exit = new Promise((resolve) => {
      deps.child.once('exit', (code, signal) => {
        this.#exitInfo = { code, signal };
        resolve(this.#exitInfo);
      });
    });
  }

  get exit(): Promise<ExitInfo> {
    return this.#exit;
  }

  /** Set once the process has exited (and been reaped). */
  get exitInfo(): ExitInfo | undefined {
    return this.#exitInfo;
  }

  get commandLine(): string {
    return [this.spec.command, ...this.spec.args].join(' ');
  }

  /** Sends a signal to the whole process group. */
  signal(signal: NodeJS.Signals): void {
    signalGroup(this.pid, signal);
  }

  /** Lets the owner exit while this process runs (used only by tests that outlive a handle). */
  unref(): void {
    this.#child.unref();
  }
}

/** Spawns detached (own process group) so a terminal's Ctrl-C reaches only the launcher. */
export async function spawnDetached(spec: SpawnSpec): Promise<SpawnedProcess> {
  const log = openSync(spec.logPath, 'a');
  try {
    const child = spawn(spec.command, spec.args, {
      detached: true,
      stdio: ['ignore', log, log],
      env: spec.env ?? process.env,
      cwd: spec.cwd,
    });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => {
        if (child.pid === undefined) reject(new Error(`${spec.name} has no pid`));
        else resolve(child.pid);
      });
    });
    return new SpawnedProcess({ spec, child, pid });
  } catch (error) {
    throw new Error(`could not start ${spec.name}: ${spec.command}`, { cause: error });
  } finally {
    closeSync(log);
  }
}

/**
 * The processes of one run: each spawn is recorded in `<runDir>/pids.json` at once, so a crash of
 * the launcher still leaves enough to clean up by PID.
 */
export class RunProcesses {
  readonly #runDir: string;
  readonly #processes: SpawnedProcess[] = [];

  constructor(deps: { runDir: string }) {
    this.#runDir = deps.runDir;
  }

  get list(): readonly SpawnedProcess[] {
    return this.#processes;
  }

  async spawn(spec: Omit<SpawnSpec, 'logPath'>): Promise<SpawnedProcess> {
    const started = await spawnDetached({
      ...spec,
      logPath: path.join(this.#runDir, `${spec.name}.log`),
    });
    this.#processes.push(started);
    this.#record();
    return started;
  }

  /**
   * Starts the exited process `name` again with the same command line, environment and log file
   * (appended to), in its place in the start order; pids.json is rewritten at once.
   */
  async respawn(name: string): Promise<SpawnedProcess> {
    const index = this.#processes.findIndex((p) => p.spec.name === name);
    const previous = this.#processes[index];
    if (previous === undefined) throw new Error(`no process named ${name} in this run`);
    if (previous.exitInfo === undefined) {
      throw new Error(`${name} (pid ${previous.pid}) is still running; stop it before a respawn`);
    }
    const started = await spawnDetached(previous.spec);
    this.#processes[index] = started;
    this.#record();
    return started;
  }

  #record(): void {
    writePidsFile(this.#runDir, {
      owner: process.pid,
      runDir: this.#runDir,
      processes: this.#processes.map((p) => ({
        name: p.spec.name,
        pid: p.pid,
        command: p.spec.command,
      })),
    });
  }

  /** Stops in reverse start order; every process is attempted even if one refuses to die. */
  async stopAll(): Promise<void> {
    const failures: Error[] = [];
    for (const started of [...this.#processes].reverse()) {
      try {
        await stopRecordedProcess({
          name: started.spec.name,
          pid: started.pid,
          command: started.spec.command,
        });
      } catch (error) {
        failures.push(error instanceof Error ? error : new Error(String(error)));
      }
    }
    if (failures.length > 0) {
      throw new AggregateError(failures, failures.map((f) => f.message).join('; '));
    }
  }
}

function writePidsFile(runDir: string, content: PidsFile): void {
  const target = path.join(runDir, PIDS_FILE);
  writeFileSync(`${target}.tmp`, `${JSON.stringify(content, null, 2)}\n`);
  renameSync(`${target}.tmp`, target);
}

export function readPidsFile(runDir: string): PidsFile | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path.join(runDir, PIDS_FILE), 'utf8'));
  } catch {
    return undefined;
  }
  return isPidsFile(parsed) ? parsed : undefined;
}

function isPidsFile(value: unknown): value is PidsFile {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.owner === 'number' &&
    typeof candidate.runDir === 'string' &&
    Array.isArray(candidate.processes) &&
    candidate.processes.every(isRecordedProcess)
  );
}

function isRecordedProcess(value: unknown): value is RecordedProcess {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.name === 'string' &&
    typeof candidate.pid === 'number' &&
    typeof candidate.command === 'string'
  );
}

/** True while the PID exists and is not a zombie (a zombie is dead but not yet reaped). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z';
  } catch {
    return false;
  }
}

function runsCommand(pid: number, command: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === command;
  } catch {
    return false;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

async function waitUntilGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
  return true;
}

/** SIGTERM to the group, up to 10 s, then SIGKILL; fails if the process is still there after. */
export async function stopRecordedProcess(recorded: RecordedProcess): Promise<StopOutcome> {
  if (!isAlive(recorded.pid)) return 'already-gone';
  if (!runsCommand(recorded.pid, recorded.command)) return 'pid-reused';
  signalGroup(recorded.pid, 'SIGTERM');
  if (await waitUntilGone(recorded.pid, STOP_GRACE_MS)) return 'terminated';
  signalGroup(recorded.pid, 'SIGKILL');
  if (await waitUntilGone(recorded.pid, KILL_WAIT_MS)) return 'killed';
  throw new ProcessStopError(`${recorded.name} (pid ${recorded.pid}) survived SIGKILL`);
}

export interface LeftoverReport {
  readonly runDir: string;
  readonly stopped: readonly {
    readonly name: string;
    readonly pid: number;
    readonly outcome: StopOutcome;
  }[];
}

/**
 * Stops what leftover pids.json files record and deletes their run directories. With
 * `onlyDeadOwners`, runs whose launcher is still alive are left alone (another test run or `up`).
 */
export async function cleanLeftoverRuns(options: {
  runsDir: string;
  onlyDeadOwners: boolean;
}): Promise<LeftoverReport[]> {
  const reports: LeftoverReport[] = [];
  for (const runDir of listRunDirs(options.runsDir)) {
    const pids = readPidsFile(runDir);
    if (
      options.onlyDeadOwners &&
      pids !== undefined &&
      pids.owner !== process.pid &&
      isAlive(pids.owner)
    )
      continue;
    const stopped = [];
    for (const recorded of [...(pids?.processes ?? [])].reverse()) {
      stopped.push({
        name: recorded.name,
        pid: recorded.pid,
        outcome: await stopRecordedProcess(recorded),
      });
    }
    rmSync(runDir, { recursive: true, force: true });
    reports.push({ runDir, stopped });
  }
  return reports;
}

/**
 * For `process.on('exit')`, where nothing asynchronous runs: SIGKILL every group still running in
 * runs this process owns, then delete those run directories.
 */
export function killOwnedRunsSync(runsDir: string): void {
  for (const runDir of listRunDirs(runsDir)) {
    const pids = readPidsFile(runDir);
    if (pids?.owner !== process.pid) continue;
    const running = pids.processes.filter((p) => isAlive(p.pid) && runsCommand(p.pid, p.command));
    for (const recorded of running) signalGroup(recorded.pid, 'SIGKILL');
    // A run with nothing left running is a failed start whose logs an error message names: keep it.
    if (running.length > 0) rmSync(runDir, { recursive: true, force: true });
  }
}

function listRunDirs(runsDir: string): string[] {
  try {
    return readdirSync(runsDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => path.join(runsDir, entry.name));
  } catch {
    return [];
  }
}

/** The last `count` lines of a log file, or a note when it cannot be read. */
export function tailFile(filePath: string, count: number): string {
  try {
    const lines = readFileSync(filePath, 'utf8').trimEnd().split('\n');
    return lines.slice(-count).join('\n');
  } catch (error) {
    return `(cannot read ${filePath}: ${(error as Error).message})`;
  }
}
