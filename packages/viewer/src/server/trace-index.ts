/**
 * A byte-offset index of one JSONL rollout trace. The file is scanned once, in chunks, and followed as it grows (a
 * run still writing it): each group (the K records of one (step, episode, turn, seat), written together) keeps its
 * byte range and a small numeric summary; each episode keeps the ids of its groups and a hash of its selected path.
 * No record text stays in memory: an episode's tree is read back from its groups' byte ranges on demand.
 */
import { open, stat, type FileHandle } from 'node:fs/promises';
import type { EpisodeOutcome, GroupSummary, TraceLine } from '../common/types.js';
import { hashText } from '../common/queries.js';

/** Bytes read per scan chunk (the server answers other requests between chunks). */
const CHUNK = 1 << 20;

/** A trace file that cannot be read as a rollout trace (a message naming the file, the line and what to do). */
export class TraceFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TraceFileError';
  }
}

interface EpisodeEntry {
  readonly episodeId: string;
  readonly instanceUid: string;
  readonly step: number | null;
  readonly groups: number[];
  success: boolean;
  turns: number;
  readonly path: { turn: number; seat: string; hash: number }[];
}

/** The index of one trace file, updated by {@link TraceIndex.update}. */
export class TraceIndex {
  /** Group summaries in file order. */
  readonly groups: GroupSummary[] = [];
  /** Byte range [start, end) of each group. */
  private starts = new Float64Array(1024);
  private ends = new Float64Array(1024);
  private readonly episodes = new Map<string, EpisodeEntry>();
  /** Bytes indexed (always at a line boundary). */
  indexedBytes = 0;
  /** File size at the last update. */
  size = 0;
  records = 0;
  /** Whether every record has a step (a training trace). */
  private sawStep = false;
  private pending: SlimRecord[] = [];
  private pendingStart = 0;
  private pendingEnd = 0;
  private updating: Promise<void> | undefined;

  constructor(
    /** Absolute path of the trace. */
    readonly file: string,
    /** Its name in the run (for messages). */
    readonly name: string,
  ) {}

  /** Indexes the whole file as it is now, its last group included. */
  async settle(): Promise<void> {
    await this.update();
    await this.update();
  }

  /** Training trace or evaluation trace. */
  get kind(): 'train' | 'eval' {
    return this.sawStep ? 'train' : 'eval';
  }

  /** Number of episodes seen. */
  get episodeCount(): number {
    return this.episodes.size;
  }

  /**
   * Indexes the bytes appended since the last call (a file that shrank is indexed again from its start). A group is
   * complete once a record of another group follows it, or once a later call finds that the file did not grow.
   */
  update(): Promise<void> {
    this.updating ??= this.scan().finally(() => {
      this.updating = undefined;
    });
    return this.updating;
  }

  private reset(): void {
    this.groups.length = 0;
    this.episodes.clear();
    this.indexedBytes = 0;
    this.records = 0;
    this.pending = [];
    this.sawStep = false;
  }

  private async scan(): Promise<void> {
    let size: number;
    try {
      size = (await stat(this.file)).size;
    } catch (err) {
      throw new TraceFileError(`${this.name}: cannot read it (${(err as Error).message})`);
    }
    if (size < this.indexedBytes) this.reset();
    this.size = size;
    if (size === this.indexedBytes) {
      // the file did not grow since the last scan: its last group is complete (a writer writes a group at once)
      this.flushGroup();
      return;
    }
    const fh = await open(this.file, 'r');
    try {
      const buf = Buffer.allocUnsafe(CHUNK);
      let carry: Buffer = Buffer.alloc(0);
      let pos = this.indexedBytes;
      while (pos < size) {
        const { bytesRead } = await fh.read(buf, 0, Math.min(CHUNK, size - pos), pos);
        if (bytesRead === 0) break;
        const data = carry.length ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
        const base = pos - carry.length;
        pos += bytesRead;
        let lineStart = 0;
        for (let nl = data.indexOf(10, lineStart); nl !== -1; nl = data.indexOf(10, lineStart)) {
          if (nl > lineStart) this.line(data.toString('utf8', lineStart, nl), base + lineStart, base + nl + 1);
          lineStart = nl + 1;
        }
        carry = Buffer.from(data.subarray(lineStart));
        this.indexedBytes = base + lineStart;
      }
    } finally {
      await fh.close();
    }
  }

  private line(text: string, start: number, end: number): void {
    let r: TraceLine;
    try {
      r = JSON.parse(text) as TraceLine;
    } catch {
      throw new TraceFileError(
        `${this.name}: byte ${start} is not a JSON line; is it a rollout trace (troupe train's trace.jsonl, troupe eval --trace)?`,
      );
    }
    if (
      typeof r !== 'object' ||
      r === null ||
      typeof r.episodeId !== 'string' ||
      typeof r.turn !== 'number' ||
      typeof r.seat !== 'string' ||
      typeof r.reward !== 'number'
    ) {
      throw new TraceFileError(
        `${this.name}: the line at byte ${start} is not a trace record (it needs episodeId, turn, seat, reward); is it a rollout trace?`,
      );
    }
    this.records++;
    if (r.step !== null && r.step !== undefined) this.sawStep = true;
    const head = this.pending[0];
    if (
      head &&
      (head.episodeId !== r.episodeId || head.turn !== r.turn || head.seat !== r.seat || head.step !== r.step)
    )
      this.flushGroup();
    if (this.pending.length === 0) this.pendingStart = start;
    this.pending.push(slim(r));
    this.pendingEnd = end;
  }

  private flushGroup(): void {
    const rs = this.pending;
    if (rs.length === 0) return;
    this.pending = [];
    const first = rs[0]!;
    const id = this.groups.length;
    if (id === this.starts.length) {
      const grow = (a: Float64Array) => {
        const b = new Float64Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.starts = grow(this.starts);
      this.ends = grow(this.ends);
    }
    this.starts[id] = this.pendingStart;
    this.ends[id] = this.pendingEnd;
    const rewards = rs.map((r) => r.reward);
    const termMeans: Record<string, number> = {};
    for (const r of rs)
      for (const [t, v] of Object.entries(r.terms ?? {})) termMeans[t] = (termMeans[t] ?? 0) + v / rs.length;
    const spread = Math.max(...rewards) - Math.min(...rewards);
    const selected = rs.find((r) => r.selected);
    const key = `${first.step ?? ''}\u0000${first.episodeId}`;
    let ep = this.episodes.get(key);
    if (!ep)
      this.episodes.set(
        key,
        (ep = {
          episodeId: first.episodeId,
          instanceUid: first.instanceUid,
          step: first.step ?? null,
          groups: [],
          success: false,
          turns: 0,
          path: [],
        }),
      );
    const group: GroupSummary = {
      id,
      step: first.step ?? null,
      episodeId: first.episodeId,
      instanceUid: first.instanceUid,
      turn: first.turn,
      seat: first.seat,
      rewards,
      advantages: rs.map((r) => r.advantage ?? null),
      termMeans,
      selected: selected ? selected.branch : -1,
      greedy: rs.find((r) => r.greedy === true)?.branch ?? -1,
      malformed: rs.filter((r) => r.parseError !== null && r.parseError !== undefined).length,
      spread,
      episodeSuccess: false,
      // as the kernel's advantages count it (all rewards equal); a lone branch only when it was trained (has an advantage)
      zeroVariance: rewards.every((r) => r === rewards[0]) && (rs.length > 1 || rs[0]!.advantage !== null),
    };
    this.groups.push(group);
    ep.groups.push(id);
    ep.turns = Math.max(ep.turns, first.turn + 1);
    if (selected) {
      ep.path.push({ turn: first.turn, seat: first.seat, hash: selected.hash });
      // the episode's outcome is the state after its last selected branch
      ep.success = selected.success;
    }
    for (const g of ep.groups) this.groups[g]!.episodeSuccess = ep.success;
  }

  /** Every episode's outcome and selected path. */
  outcomes(): EpisodeOutcome[] {
    return [...this.episodes.values()].map((e) => ({
      episodeId: e.episodeId,
      instanceUid: e.instanceUid,
      step: e.step,
      success: e.success,
      turns: e.turns,
      path: e.path,
    }));
  }

  /** Episode ids, in file order, optionally of one step. */
  episodeIds(step?: number | null): { episodeId: string; step: number | null }[] {
    return [...this.episodes.values()]
      .filter((e) => step === undefined || e.step === step)
      .map((e) => ({ episodeId: e.episodeId, step: e.step }));
  }

  /** The records of one episode (of one step when the trace holds the id at several), read from their byte ranges. */
  async episode(episodeId: string, step?: number | null): Promise<TraceLine[] | undefined> {
    const ep =
      step !== undefined
        ? this.episodes.get(`${step ?? ''}\u0000${episodeId}`)
        : [...this.episodes.values()].find((e) => e.episodeId === episodeId);
    if (!ep) return undefined;
    const fh: FileHandle = await open(this.file, 'r');
    try {
      const out: TraceLine[] = [];
      for (const g of ep.groups) {
        const start = this.starts[g]!,
          len = this.ends[g]! - start;
        const buf = Buffer.allocUnsafe(len);
        await fh.read(buf, 0, len, start);
        for (const line of buf.toString('utf8').split('\n')) if (line) out.push(JSON.parse(line) as TraceLine);
      }
      return out;
    } finally {
      await fh.close();
    }
  }
}

/** The fields of a record the index keeps while its group is open (the prompt and completion text are dropped). */
function slim(r: TraceLine): SlimRecord {
  return {
    step: r.step ?? null,
    episodeId: r.episodeId,
    instanceUid: r.instanceUid ?? r.episodeId,
    split: r.split,
    turn: r.turn,
    seat: r.seat,
    role: r.role,
    policy: r.policy,
    policyVersion: r.policyVersion,
    branch: r.branch ?? 0,
    prompt: [],
    completion: '',
    action: null,
    parseError: r.parseError ?? null,
    terms: r.terms ?? {},
    reward: r.reward,
    advantage: r.advantage ?? null,
    selected: r.selected === true,
    ...(r.greedy === true ? { greedy: true as const } : {}),
    done: r.done,
    success: r.success === true,
    hash: hashText(typeof r.completion === 'string' ? r.completion : ''),
  };
}

/** A record without its text, and a hash of its completion. */
type SlimRecord = TraceLine & { readonly hash: number };
