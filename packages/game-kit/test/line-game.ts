/** A tiny moves game for the kit's tests: a walker on a line of `size` cells steps L/R to the goal cell. */
import { splitOfContent, type Split } from '@troupe/kernel';
import {
  ConfigReader,
  GAME_CONFIG_DEFAULTS,
  MovesGame,
  readMovesGameConfig,
  instanceAt,
  moveListReward,
  runMoveList,
  type Direction,
  type MovesGameConfig,
  type MovesProposal,
  type MovesRun,
  type MovesState,
  type MovesTurn,
  type Settled,
} from '../src/index.js';

export interface LineInstance {
  readonly size: number;
  readonly start: number;
  readonly goal: number;
}
export interface LineProposal extends MovesProposal<number> {
  readonly reachesGoal: boolean;
}
export type LineTurn = MovesTurn<number, LineProposal>;
export interface LineState extends MovesState<LineInstance, LineProposal, LineTurn> {
  readonly position: number;
}

const DEFAULTS: MovesGameConfig = Object.freeze({
  ...GAME_CONFIG_DEFAULTS,
  maxMoves: 8,
  malformedPenalty: -2,
  notation: 'moves',
});

export class LineGame extends MovesGame<LineState, MovesRun<number>, MovesGameConfig> {
  constructor(raw: Record<string, unknown> = {}) {
    const r = new ConfigReader('line-v0', DEFAULTS, raw);
    super('line-v0', readMovesGameConfig(r, 8));
  }
  instance(split: Split, index: number, seed: number): LineInstance {
    return instanceAt(
      {
        id: this.id,
        splitFractions: this.config.splitFractions,
        maxAttempts: 1000,
        hint: 'there is nothing to change',
        draw: (rng, wanted) => {
          const c = { size: 6, start: rng.int(6), goal: rng.int(6) };
          return c.start !== c.goal && splitOfContent(this.instanceKey(c), this.config.splitFractions) === wanted
            ? c
            : null;
        },
      },
      split,
      index,
      seed,
    );
  }
  describe(i: LineInstance): Record<string, unknown> {
    return { ...i };
  }
  reset(instance: LineInstance): LineState {
    return this.start(instance, { position: instance.start, movesUsed: 0 });
  }
  taskText(seat: string): string {
    return [this.turnsLine(), ...this.closingLines(seat, 'reaches the goal')].join('\n');
  }
  stateText(s: LineState): string {
    return `${this.turnLine(s)} at ${s.position}, goal ${s.instance.goal}`;
  }
  proposalText(p: LineProposal): string {
    return `${this.compactMoves(p.moves)} -> ${p.end}`;
  }
  historyText(t: LineTurn): string {
    return `${this.compactMoves(t.executed)} ${t.from}->${t.to}`;
  }
  protected observationData(s: LineState): Record<string, unknown> {
    return { position: s.position };
  }
  protected where(s: LineState): number {
    return s.position;
  }
  protected run(s: LineState, moves: readonly Direction[]): MovesRun<number> {
    const run = runMoveList(
      s.position,
      moves,
      (at) => at === s.instance.goal,
      (at, dir) => {
        const to = at + (dir === 'R' ? 1 : dir === 'L' ? -1 : 0);
        const valid = to !== at && to >= 0 && to < s.instance.size;
        return { to: valid ? to : at, valid, reward: valid ? (to === s.instance.goal ? 1 : -0.1) : -0.5 };
      },
    );
    return { ...run, ...moveListReward(run.perMove, run.solved, this.config.reward) };
  }
  protected proposalFields(_s: LineState, run: MovesRun<number> | null): Pick<LineProposal, 'reachesGoal'> {
    return { reachesGoal: run?.solved ?? false };
  }
  protected settle(s: LineState, record: LineTurn, movesUsed: number): Settled<LineState, LineTurn> {
    return { success: record.to === s.instance.goal, next: { position: record.to, movesUsed } };
  }
  protected solve(s: LineState): Direction[] {
    const d = s.instance.goal - s.position;
    return Array.from({ length: Math.abs(d) }, (): Direction => (d > 0 ? 'R' : 'L'));
  }
}
