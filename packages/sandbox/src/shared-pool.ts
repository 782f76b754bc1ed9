/**
 * One pool of sandbox slots per process. Every part of a run that executes programs (the code and math environments,
 * the coder role) asks the pool for a sandbox with its own settings (isolation, allowUnisolated, a share of the
 * slots, default limits); all those sandboxes take their runs' slots from the pool, so the process never runs more
 * programs at once than the pool allows. The kernel's `SandboxPool` service is this class (the host binds
 * {@link sharedSandboxPool}).
 */
import { availableParallelism } from 'node:os';
import { TaskPool } from './pool.js';
import { Sandbox } from './sandbox.js';
import type { SandboxLimits, SandboxOptions } from './types.js';

/** What a contribution may choose about its own runs. */
export interface SandboxSettings {
  readonly isolation?: SandboxOptions['isolation'];
  readonly allowUnisolated?: boolean;
  /** At most this many of these runs at once (default: all the pool's slots). */
  readonly concurrency?: number;
  readonly defaults?: Partial<SandboxLimits>;
}

/** Options of a {@link SharedSandboxPool}. */
export interface SharedSandboxPoolOptions {
  /** Programs running at once, all sandboxes together (default: the number of CPUs). */
  readonly concurrency?: number;
  /** The Python interpreter of every sandbox (see {@link SandboxOptions.python}). */
  readonly python?: string;
  /** The Node.js executable of every sandbox (see {@link SandboxOptions.node}). */
  readonly node?: string;
}

const SETTING_KEYS = ['isolation', 'allowUnisolated', 'concurrency', 'defaults'] as const;

/** The canonical key of a settings object (keys sorted, undefined values dropped), so equal settings share a sandbox. */
function settingsKey(settings: SandboxSettings): string {
  const defaults = Object.entries(settings.defaults ?? {})
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => a.localeCompare(b));
  return JSON.stringify([
    settings.isolation ?? 'auto',
    settings.allowUnisolated ?? false,
    settings.concurrency ?? null,
    defaults,
  ]);
}

/** Sandboxes over one set of run slots. */
export class SharedSandboxPool {
  /** Programs running at once, all sandboxes together. */
  readonly concurrency: number;
  private readonly slots: TaskPool;
  private readonly sandboxes = new Map<string, Sandbox>();

  /** @param options slots and runtimes; see {@link SharedSandboxPoolOptions}. */
  constructor(private readonly options: SharedSandboxPoolOptions = {}) {
    this.concurrency = options.concurrency ?? Math.max(1, availableParallelism());
    this.slots = new TaskPool(this.concurrency);
  }

  /** Programs running now, all sandboxes together. */
  get running(): number {
    return this.slots.running;
  }

  /**
   * The sandbox with `settings` (created on first use; equal settings give the same sandbox, which probes its
   * isolation once). Throws a RangeError naming the bad setting.
   */
  runner(settings: SandboxSettings = {}): Sandbox {
    if (typeof settings !== 'object' || settings === null)
      throw new RangeError('SharedSandboxPool: settings must be an object');
    const unknown = Object.keys(settings).filter((k) => !(SETTING_KEYS as readonly string[]).includes(k));
    if (unknown.length)
      throw new RangeError(
        `SharedSandboxPool: unknown setting ${unknown.join(', ')} (known: ${SETTING_KEYS.join(', ')})`,
      );
    const key = settingsKey(settings);
    let sandbox = this.sandboxes.get(key);
    if (!sandbox) {
      const { python, node } = this.options;
      sandbox = new Sandbox({
        ...settings,
        ...(python ? { python } : {}),
        ...(node ? { node } : {}),
        slots: this.slots,
      });
      this.sandboxes.set(key, sandbox);
    }
    return sandbox;
  }

  /** Closes every sandbox: new runs are refused, running ones killed; resolves when their temp dirs are gone. */
  async close(): Promise<void> {
    await Promise.all([...this.sandboxes.values()].map((s) => s.close()));
  }
}

let processPool: SharedSandboxPool | undefined;

/**
 * The pool of this process (created on first use, with one slot per CPU). Hosts bind it as the kernel's
 * `SandboxPool` service; a plugin used without a host falls back to it, so either way a process has one pool.
 */
export function sharedSandboxPool(): SharedSandboxPool {
  processPool ??= new SharedSandboxPool();
  return processPool;
}
