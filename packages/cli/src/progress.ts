import type { EpisodeEvent } from '@troupe/kernel';

/**
 * A progress display fed with episode events (an rxjs observer): a self-rewriting line on a terminal, plain
 * lines at most every `plainEveryMs` when stderr is not a TTY, nothing when disabled.
 */
export class EpisodeProgress {
  private ended = 0;
  private successes = 0;
  private lastPlain = 0;
  private lastShown = -1;
  private readonly started = Date.now();
  private readonly tty: boolean;

  constructor(
    private readonly total: number,
    private readonly options: { enabled: boolean; label?: string; plainEveryMs?: number } = { enabled: true },
  ) {
    this.tty = Boolean(process.stderr.isTTY);
  }

  /** Feeds one event. */
  next(event: EpisodeEvent): void {
    if (event.type !== 'end') return;
    this.ended++;
    if (event.success) this.successes++;
    this.render(false);
  }

  /** Writes the last line. */
  complete(): void {
    this.render(true);
  }

  private render(final: boolean): void {
    if (!this.options.enabled || (final && this.lastShown === this.ended && !this.tty)) return;
    const elapsed = (Date.now() - this.started) / 1000;
    const rate = this.ended / Math.max(elapsed, 1e-3);
    const eta = rate > 0 ? (this.total - this.ended) / rate : 0;
    const line = `${this.options.label ?? 'episodes'} ${this.ended}/${this.total}  success ${(this.successes / Math.max(this.ended, 1)).toFixed(3)}  ${rate.toFixed(1)}/s  eta ${eta.toFixed(0)}s`;
    if (this.tty) {
      process.stderr.write(`\r${line}\x1b[K${final ? '\n' : ''}`);
    } else if (final || Date.now() - this.lastPlain >= (this.options.plainEveryMs ?? 5000)) {
      this.lastPlain = Date.now();
      this.lastShown = this.ended;
      process.stderr.write(`${line}\n`);
    }
  }
}
