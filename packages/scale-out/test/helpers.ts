/** Test helpers: worker child processes (test/fixtures/worker.ts) and collecting a dispatch's outcomes. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { JobOutcome } from '@troupe/scale-out';

const FIXTURE = fileURLToPath(new URL('./fixtures/worker.ts', import.meta.url));

export interface WorkerEvent {
  event: 'ready' | 'start' | 'done';
  name: string;
  key?: string;
  attempt?: number;
}

export interface ChildWorker {
  name: string;
  child: ChildProcess;
  events: WorkerEvent[];
  /** Resolves with the first event (past or future) that matches. */
  waitFor(match: (e: WorkerEvent) => boolean, timeoutMs?: number): Promise<WorkerEvent>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts a worker process and resolves once it has said `ready`. */
export async function spawnWorker(o: {
  url: string;
  queue: string;
  name: string;
  pool?: string;
  stallMs?: number;
  heartbeatMs?: number;
}): Promise<ChildWorker> {
  const child = spawn(process.execPath, ['--conditions=troupe:source', '--import', 'tsx', FIXTURE], {
    env: { ...process.env, SCALE_OUT_WORKER: JSON.stringify(o) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const events: WorkerEvent[] = [];
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (!line.startsWith('{')) return;
    events.push(JSON.parse(line) as WorkerEvent);
    for (const wake of waiters) wake();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const worker: ChildWorker = {
    name: o.name,
    child,
    events,
    waitFor(match, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = events.find(match);
          if (found) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`worker ${o.name}: no matching event in ${timeoutMs} ms; stderr: ${stderr}`));
        }, timeoutMs);
        waiters.add(check);
        child.once('exit', () => {
          if (!waiters.has(check)) return;
          waiters.delete(check);
          clearTimeout(timer);
          reject(new Error(`worker ${o.name} exited; stderr: ${stderr}`));
        });
        check();
      });
    },
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
  await worker.waitFor((e) => e.event === 'ready');
  return worker;
}

/** Every outcome of a dispatch, in the order yielded. */
export async function collect<R>(outcomes: AsyncIterable<JobOutcome<R>>): Promise<JobOutcome<R>[]> {
  const all: JobOutcome<R>[] = [];
  for await (const outcome of outcomes) all.push(outcome);
  return all;
}

/** The keys of `outcomes`, sorted (duplicates kept, so a test sees them). */
export const keysOf = (outcomes: readonly JobOutcome<unknown>[]) => outcomes.map((o) => o.key).sort();

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
