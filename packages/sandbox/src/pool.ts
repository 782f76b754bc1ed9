/** A tiny p-limit style queue: at most `concurrency` tasks run at once, the rest wait in FIFO order. */
export class TaskPool {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  /** @param concurrency how many tasks may run at once (at least 1). */
  constructor(readonly concurrency: number) {
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  }

  /** Tasks currently running. */
  get running(): number {
    return this.active;
  }

  /** Tasks waiting for a slot. */
  get pending(): number {
    return this.waiting.length;
  }

  /** Runs `task` when a slot is free; resolves or rejects with the task's outcome. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    // A finishing task hands its slot straight to the next waiter, so `active` never exceeds `concurrency`.
    if (this.active >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
