/**
 * The worker side of the distributed engine: plays one {@link RolloutJob} exactly as the trainer's own process plays
 * that instance (rollouts.ts, `batching: instance`), on a team rebuilt from the job's spec with the job's policy
 * version loaded. Teams are kept between jobs (a few, least recently used first out), each at one version, so a
 * worker composes a team once and loads each version once per team it keeps.
 */
import { createHash } from 'node:crypto';
import {
  composeTeam,
  PluginError,
  SpecError,
  type TeamRuntime,
  type TeamSpec,
  type TrainerConfig,
} from '@troupe/kernel';
import { evalEpisode } from '../evaluate.js';
import { policyHandles, type PolicyHandle } from '../policies.js';
import { instanceEpisodes, playEpisodes, summaryEvent, treeSeats, type RolloutSetup } from '../rollouts.js';
import { runEpisode, type RolloutJob, type RolloutJobResult } from './job.js';
import { loadVersion } from './versions.js';

/** A job a worker refuses (bad payload, a spec plugin not installed, an unreadable version): retrying cannot help. */
export class JobRefusedError extends Error {
  readonly unrecoverable = true;
  constructor(message: string) {
    super(message);
    this.name = 'JobRefusedError';
  }
}

/**
 * The team of a job's spec, composed as the trainer composes it (its policies loaded from their model folders or
 * presets and seeds; LoRA policies on one shared base), and its policy handles. A spec this worker cannot build (a
 * plugin not installed here, a bad spec) is a {@link JobRefusedError}.
 */
export async function composeJobTeam(
  spec: TeamSpec,
  config: TrainerConfig,
): Promise<{ team: TeamRuntime; handles: PolicyHandle[] }> {
  let team: TeamRuntime;
  try {
    team = await composeTeam(spec);
  } catch (err) {
    if (err instanceof PluginError || err instanceof SpecError)
      throw new JobRefusedError(`this worker cannot build team '${spec.name}': ${err.message}`);
    throw err;
  }
  const handles = policyHandles(
    spec,
    team.policies,
    team.seats.map((s) => s.name),
    config,
  );
  return { team, handles };
}

interface KeptTeam {
  readonly specKey: string;
  readonly team: TeamRuntime;
  readonly handles: PolicyHandle[];
  readonly setup: RolloutSetup;
  /** The version loaded (its folder and counters, as JSON). */
  version: string | undefined;
  /** Jobs playing on it now. */
  busy: number;
  lastUsed: number;
}

/** Options of {@link JobPlayer}. */
export interface JobPlayerOptions {
  /** Teams kept at once (default 2: the step's version and the next). */
  readonly teams?: number;
}

/** Plays rollout jobs (see the module comment). Call {@link dispose} when done. */
export class JobPlayer {
  private readonly kept: KeptTeam[] = [];
  private lock: Promise<unknown> = Promise.resolve();
  private clock = 0;
  private readonly capacity: number;
  /** Jobs played and episodes they held, since the start. */
  played = 0;
  episodes = 0;

  constructor(options: JobPlayerOptions = {}) {
    this.capacity = Math.max(1, options.teams ?? 2);
  }

  /** Plays one job. Throws {@link JobRefusedError} for what no retry can fix; other errors may be retried. */
  async play(job: RolloutJob): Promise<RolloutJobResult> {
    if (job?.format !== 1 || typeof job.step !== 'number' || !job.spec || !job.config || !job.instance)
      throw new JobRefusedError(
        'not a rollout job of this Troupe version (format 1): run the same Troupe version on the trainer and the workers',
      );
    const started = performance.now();
    const kept = await this.teamFor(job); // counted busy
    try {
      if (job.eval || job.run) {
        const events: RolloutJobResult['events'] = [];
        const context = job.eval
          ? evalEpisode(kept.setup, job.eval.index, job.eval)
          : runEpisode(kept.setup, job.run!.index, job.run!);
        const ep = await playEpisodes([[context]], 1, 'instance', (e) => events.push(e));
        this.played++;
        this.episodes += ep.length;
        return {
          records: [],
          solved: ep.some((e) => e.end.success),
          events,
          seconds: (performance.now() - started) / 1000,
        };
      }
      const contexts = instanceEpisodes(job.step, job.instance, kept.setup);
      const events: RolloutJobResult['events'] = [];
      const episodes = await playEpisodes([contexts], job.config.concurrency, 'instance', (e) => {
        const s = summaryEvent(e);
        if (s) events.push(s);
      });
      this.played++;
      this.episodes += episodes.length;
      return {
        records: episodes.flatMap((e) => e.steps),
        solved: episodes.some((e) => e.end.success),
        events,
        seconds: (performance.now() - started) / 1000,
      };
    } finally {
      kept.busy--;
      kept.lastUsed = ++this.clock;
    }
  }

  /**
   * A kept team of the job's spec at the job's version: one already there, else the least recently used idle team of
   * that spec reloaded (when as many teams as kept are there), else a new one. One lookup at a time.
   */
  private teamFor(job: RolloutJob): Promise<KeptTeam> {
    const next = this.lock.then(() => this.lookup(job));
    this.lock = next.catch(() => undefined);
    return next;
  }

  private async lookup(job: RolloutJob): Promise<KeptTeam> {
    const specKey = createHash('sha256')
      .update(JSON.stringify([job.spec, job.config]))
      .digest('hex');
    const version = JSON.stringify(job.policies);
    const hit = this.kept.find((k) => k.specKey === specKey && k.version === version);
    if (hit) {
      hit.lastUsed = ++this.clock;
      hit.busy++;
      return hit;
    }
    const idle = this.kept.filter((k) => k.busy === 0).sort((a, b) => a.lastUsed - b.lastUsed);
    // a team holding other weights is reused only when the job's version replaces them (a folder, or no weights at all)
    const reuse =
      this.kept.length >= this.capacity
        ? idle.find(
            (k) => k.specKey === specKey && (job.policies.dir !== undefined || !k.handles.some((h) => h.trainable)),
          )
        : undefined;
    let k = reuse;
    if (!k) {
      // over capacity: the least recently used idle team goes
      for (const out of idle) {
        if (this.kept.length < this.capacity) break;
        this.kept.splice(this.kept.indexOf(out), 1);
        await out.team.dispose();
      }
      k = await this.compose(job, specKey);
      this.kept.push(k);
    }
    k.version = undefined;
    try {
      await loadVersion(k.handles, job.policies);
    } catch (err) {
      throw err instanceof Error && 'unrecoverable' in err ? err : new JobRefusedError(String(err));
    }
    k.version = version;
    k.lastUsed = ++this.clock;
    k.busy++;
    return k;
  }

  private async compose(job: RolloutJob, specKey: string): Promise<KeptTeam> {
    const { team, handles } = await composeJobTeam(job.spec, job.config);
    const setup: RolloutSetup = {
      environment: team.environment,
      seats: team.seats,
      treeSeats: treeSeats(team.seats, job.config),
      reward: team.reward,
      seed: job.spec.seed,
      config: job.config,
      batching: 'instance',
    };
    return { specKey, team, handles, setup, version: undefined, busy: 0, lastUsed: 0 };
  }

  /** Frees every kept team. */
  async dispose(): Promise<void> {
    const all = this.kept.splice(0);
    for (const k of all) await k.team.dispose();
  }
}
