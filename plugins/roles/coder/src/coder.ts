/**
 * The coder role. Two modes:
 *
 * - `program` (seat action type `program`, e.g. the code environment's coder): the reply's program IS the action,
 *   `{ language, source }`; the environment runs it.
 * - `program-output-actions` (any other action type, e.g. `moves` of plan-path: the games' proposer, the paper's
 *   tool agent): the role runs the program in the sandbox and parses its printed output as the action. The move's
 *   `details` carry the program, its stdout/stderr and the verdict, so the next seat's observation can show them.
 *
 * `mode: auto` (default) picks `program` when the seat's action type is `program`, and `program-output-actions`
 * otherwise.
 */
import type {
  ChatMessage,
  JsonSchema,
  Move,
  Observation,
  OutputGrammar,
  ProgramLimits,
  ProgramRunner,
  RenderContext,
  Role,
  RoleContribution,
  SandboxSettings,
  SeatContext,
} from '@troupe/kernel';
import {
  ANY_ACTION_TYPE,
  injectable,
  injectParameters,
  Logger,
  optionalService,
  readConfigSchema,
  SandboxPool,
} from '@troupe/kernel';
import { renderUserMessage } from '@troupe/game-kit';
import { sharedSandboxPool } from '@troupe/sandbox';
import { extractProgram, type ProgramLanguage } from './extract.js';
import { outputParserFor, programPrinting } from './output.js';

/** The program action (action type `program`). */
export interface ProgramAction {
  /** The language. */
  readonly language: ProgramLanguage;
  /** The program text (ends with one newline). */
  readonly source: string;
}

/** The part of a sandbox runner the role uses. */
export type RoleSandbox = Pick<ProgramRunner, 'run'>;

/** How the coder turns its reply into an action. */
export type CoderMode = 'auto' | 'program' | 'program-output-actions';

/** The coder's config (the team spec's `seats.<seat>.roleConfig`). */
export interface CoderConfig {
  /** See the module comment (default `auto`). */
  readonly mode: CoderMode;
  /** The language the prompt asks for (default python; both are always accepted). */
  readonly language: ProgramLanguage;
  /** Limits of the runs in program-output-actions mode (default: 2 s CPU, 5 s wall, 256 MiB). */
  readonly limits: ProgramLimits;
  /** Settings of its runner from the process's sandbox pool (isolation, allowUnisolated, its share of the slots). */
  readonly sandbox: Pick<SandboxSettings, 'isolation' | 'allowUnisolated' | 'concurrency'>;
  /**
   * The barest user message: each context block as `label: text`, then the state, last (so the program's copy of the
   * state is always the same distance after it); no task, no headings, no closing line (for tiny byte-level models
   * trained from scratch, where every character is a token). Default false.
   */
  readonly terse: boolean;
  /** Replaces the built-in system prompt (`{seat}` is substituted). */
  readonly systemPrompt?: string;
}

/** Characters of stdout and stderr kept in a move's details. */
export const DETAIL_CHARS = 2000;

/** JSON schema of the coder's config (also in schemas/coder.config.json). */
export const CODER_CONFIG_SCHEMA: JsonSchema = readConfigSchema(
  new URL('../schemas/coder.config.json', import.meta.url),
);

/**
 * Action types the coder produces: `program`, and by running the program `moves`, `answer` and any other type
 * (`*`, the kernel's `ANY_ACTION_TYPE`: the program prints it as JSON, e.g. Sudoku's fills or grid).
 */
export const CODER_PRODUCES: readonly string[] = Object.freeze(['program', 'moves', 'answer', ANY_ACTION_TYPE]);

/** Renders an observation as the user message: task, current state, then each context block under its label. */
export function renderObservation(observation: Observation): string {
  const parts = [observation.task.trim(), `## Current state\n${observation.state}`];
  for (const c of observation.context) parts.push(`## ${c.label}\n${c.text}`);
  return parts.join('\n\n');
}

function fence(language: ProgramLanguage): string {
  return language === 'python' ? 'python' : 'javascript';
}

function head(text: string, n: number): string {
  return text.length <= n ? text : `${text.slice(0, n)}… [${text.length - n} more characters]`;
}

function tail(text: string, n: number): string {
  return text.length <= n ? text : `[${text.length - n} characters cut]…${text.slice(text.length - n)}`;
}

function resolveCoderConfig(raw: Record<string, unknown>): CoderConfig {
  const mode = (raw['mode'] ?? 'auto') as CoderMode;
  if (!['auto', 'program', 'program-output-actions'].includes(mode)) {
    throw new Error(
      `coder role config mode: must be auto, program or program-output-actions, got ${JSON.stringify(mode)}`,
    );
  }
  const language = (raw['language'] ?? 'python') as ProgramLanguage;
  if (language !== 'python' && language !== 'javascript')
    throw new Error(`coder role config language: must be python or javascript, got ${JSON.stringify(language)}`);
  const terse = raw['terse'] ?? false;
  if (typeof terse !== 'boolean')
    throw new Error(`coder role config terse: must be a boolean, got ${JSON.stringify(terse)}`);
  const systemPrompt = raw['systemPrompt'];
  if (systemPrompt !== undefined && typeof systemPrompt !== 'string')
    throw new Error(`coder role config systemPrompt: must be a string, got ${JSON.stringify(systemPrompt)}`);
  return {
    mode,
    language,
    limits: (raw['limits'] ?? {}) as ProgramLimits,
    sandbox: (raw['sandbox'] ?? {}) as CoderConfig['sandbox'],
    terse,
    ...(systemPrompt === undefined ? {} : { systemPrompt }),
  };
}

/** The coder role. */
export class CoderRole implements Role<unknown> {
  /** The resolved config. */
  readonly config: CoderConfig;

  /**
   * @param id the contribution id (`coder-v0` or `coder-proposer-v0`)
   * @param config raw role config
   * @param sandbox returns the sandbox (created lazily on the first run)
   * @param produces the action types it produces
   * @param logger told (at debug) how each run of a program ended
   */
  constructor(
    readonly id: string,
    config: Record<string, unknown>,
    private readonly sandbox: () => RoleSandbox,
    readonly produces: readonly string[] = CODER_PRODUCES,
    private readonly logger?: Logger,
  ) {
    this.config = resolveCoderConfig(config);
  }

  /** Whether a seat is played in program-output-actions mode. */
  runsProgram(seat: SeatContext): boolean {
    return (
      this.config.mode === 'program-output-actions' || (this.config.mode === 'auto' && seat.actionType !== 'program')
    );
  }

  /** @inheritdoc */
  prompt(observation: Observation, seat: SeatContext): ChatMessage[] {
    const lang = this.config.language === 'python' ? 'Python 3' : 'JavaScript (Node.js)';
    const f = fence(this.config.language);
    let system: string;
    let closing: string;
    if (this.runsProgram(seat)) {
      const what =
        seat.actionType === 'moves'
          ? 'Print the list of moves on the last line, for example [U, R, D] (U = up, D = down, L = left, R = right).'
          : seat.actionType === 'answer'
            ? 'Print only the final answer on the last line.'
            : `Print the ${seat.actionType} action as JSON on the last line.`;
      system =
        `You are the ${seat.seat} of a team, and you solve tasks by writing code. Write a short, complete ${lang} program ` +
        `that computes the answer to the task and prints it. The program runs in a sandbox with no input and no network; ` +
        `its printed output is your proposal. ${what}\n\nReply with the program in one fenced code block:\n\`\`\`${f}\n# your program\n\`\`\`\n` +
        'The last code block of your reply is the program that runs.';
      closing = `Write the ${lang} program in a \`\`\`${f} block.`;
    } else {
      system =
        `You are the ${seat.seat} of a team that solves programming problems. Write a complete ${lang} program that reads ` +
        'the input from standard input and prints the answer to standard output. Read the problem carefully, mind the ' +
        `input format and the edge cases.\n\nReply with the program in one fenced code block:\n\`\`\`${f}\n# your program\n\`\`\`\n` +
        'The last code block of your reply is taken as your program.';
      closing = `Write your complete program in a \`\`\`${f} block.`;
    }
    return [
      {
        role: 'system',
        content:
          this.config.systemPrompt === undefined ? system : this.config.systemPrompt.replaceAll('{seat}', seat.seat),
      },
      {
        role: 'user',
        content: this.config.terse
          ? renderUserMessage(observation, { terse: true, stateLast: true, format: '' })
          : `${renderObservation(observation)}\n\n${closing}`,
      },
    ];
  }

  /** @inheritdoc */
  async parse(text: string, seat: SeatContext): Promise<Move<unknown>> {
    const extracted = extractProgram(text);
    if (!extracted.ok) return { kind: 'invalid', error: extracted.error, text };
    const program: ProgramAction = { language: extracted.language, source: extracted.source };
    if (!this.runsProgram(seat)) return { kind: 'action', action: program, text };
    if (seat.signal?.aborted) throw seat.signal.reason ?? new Error('aborted');
    const run = await this.sandbox().run({
      language: program.language,
      source: program.source,
      stdin: '',
      limits: { ...this.config.limits },
      ...(seat.signal ? { signal: seat.signal } : {}),
    });
    if (run.verdict === 'refused') {
      if (seat.signal?.aborted) throw seat.signal.reason ?? new Error('aborted');
      throw new Error(
        `coder role (${this.id}): the sandbox refused to run the program: ${run.reason ?? 'no reason given'}. Install bubblewrap ` +
          '(apt-get install bubblewrap) or make `unshare` work, or set roleConfig.sandbox.allowUnisolated: true where running untrusted code unisolated is acceptable.',
      );
    }
    this.logger?.debug('program ran', { seat: seat.seat, verdict: run.verdict, exitCode: run.exitCode });
    const details = {
      program: program.source,
      language: program.language,
      stdout: head(run.stdout, DETAIL_CHARS),
      stderr: tail(run.stderr, DETAIL_CHARS),
      verdict: run.verdict,
      exitCode: run.exitCode,
    };
    if (run.verdict !== 'ok') {
      const why =
        run.verdict === 'timeout'
          ? 'timed out'
          : run.verdict === 'memory-limit'
            ? 'ran out of memory'
            : run.verdict === 'output-limit'
              ? 'printed too much'
              : `crashed (exit code ${run.exitCode ?? 'none'})`;
      const err = run.stderr.trim() ? `: ${tail(run.stderr.trim(), 300)}` : '';
      return { kind: 'invalid', error: `the program ${why}${err}`, text, details };
    }
    const parsed = outputParserFor(seat.actionType)(run.stdout);
    if (!parsed.ok) return { kind: 'invalid', error: parsed.error, text, details };
    return { kind: 'action', action: parsed.action, text, details };
  }

  /**
   * A program action as its fenced block. In program-output-actions mode: the environment's oracle program when the
   * context has one (in the configured language, else in Python), so demonstrations teach the search itself; else a
   * Python program that prints `action`.
   */
  render(action: unknown, seat: SeatContext, context?: RenderContext): string {
    const block = (language: ProgramLanguage, source: string): string =>
      `\`\`\`${fence(language)}\n${source.replace(/\s+$/, '')}\n\`\`\``;
    if (!this.runsProgram(seat)) {
      const p = action as ProgramAction;
      return block(p.language, p.source);
    }
    for (const language of new Set<ProgramLanguage>([this.config.language, 'python'])) {
      const program = context?.oracleProgram?.(language);
      if (program !== undefined) return block(language, program);
    }
    return block('python', programPrinting(seat.actionType, action));
  }

  /** @inheritdoc */
  grammar(_seat: SeatContext): OutputGrammar | undefined {
    return { kind: 'regex', pattern: '```(?:python|javascript)\\n[\\s\\S]*\\S[\\s\\S]*\\n```' };
  }
}

/** The runner of a role's programs, asked of the pool on the first run (with the role config's `sandbox` settings). */
function lazySandbox(pool: SandboxPool, config: Record<string, unknown>): () => RoleSandbox {
  let sandbox: RoleSandbox | undefined;
  return () => (sandbox ??= pool.runner({ ...((config['sandbox'] ?? {}) as SandboxSettings) }));
}

/** What both coder contributions are injected with (inversify needs the base class @injectable too). */
@injectable()
class CoderContributionBase {
  /** The process's sandbox pool, shared by every role created. */
  readonly pool: SandboxPool;
  /** The process's logger. */
  readonly logger: Logger | undefined;

  /**
   * @param pool the process's sandbox pool (without a host: `sharedSandboxPool()`, the same one)
   * @param logger the process's logger
   */
  constructor(pool: SandboxPool = sharedSandboxPool(), logger?: Logger) {
    this.pool = pool;
    this.logger = logger;
  }
}

/** `coder-v0`: writes programs; in program-output-actions mode its program's printed output is the action. */
@injectable()
export class CoderRoleContribution extends CoderContributionBase implements RoleContribution {
  /** @inheritdoc */
  readonly id = 'coder-v0';
  /** @inheritdoc */
  readonly description =
    'Coder: writes a program (a ```python block); for non-program seats it runs the program in the sandbox and its printed output is the action';
  /** @inheritdoc */
  readonly produces = CODER_PRODUCES;
  /** @inheritdoc */
  readonly configSchema = CODER_CONFIG_SCHEMA;

  /** @inheritdoc */
  create(config: Record<string, unknown>): CoderRole {
    return new CoderRole(this.id, config, lazySandbox(this.pool, config), CODER_PRODUCES, this.logger?.child(this.id));
  }
}

/** `coder-proposer-v0`: the coder always in program-output-actions mode (the games' proposer, the paper's tool agent). */
@injectable()
export class CoderProposerRoleContribution extends CoderContributionBase implements RoleContribution {
  /** @inheritdoc */
  readonly id = 'coder-proposer-v0';
  /** @inheritdoc */
  readonly description =
    'Coder as proposer / tool agent: runs its program in the sandbox; the printed output ([U, R, D], an answer, JSON) is the action';
  /** @inheritdoc */
  readonly produces: readonly string[] = Object.freeze(['moves', 'answer', ANY_ACTION_TYPE]);
  /** @inheritdoc */
  readonly configSchema = CODER_CONFIG_SCHEMA;

  /** @inheritdoc */
  create(config: Record<string, unknown>): CoderRole {
    return new CoderRole(
      this.id,
      { ...config, mode: 'program-output-actions' },
      lazySandbox(this.pool, config),
      this.produces,
      this.logger?.child(this.id),
    );
  }
}
injectParameters(CoderContributionBase, [optionalService(SandboxPool), Logger]);
