/**
 * The tool-proposal suite: in a game team whose proposer may be played by a tool-using role (the coder, whose move's
 * `details` carry the program, its output and the verdict), the executor's full observation shows that program next to
 * the proposal, the compact observation leaves it out (the proposal line carries what it printed), and a proposal
 * without tool details (a planner's) gets no program block.
 */
import type { EnvironmentContribution, Move } from '@troupe/kernel';
import type { ConformanceCheck, ConformanceFailure } from './core.js';
import { check, guardedChecks, registerChecks, runChecks } from './core.js';

/** Options of the tool-proposal suite. */
export interface ToolProposalConformanceOptions {
  /** Config of the full observation (the suite adds nothing else). Default `{}`. */
  readonly config?: Record<string, unknown>;
  /** Config with the compact observation. Default `{ ...config, observation: 'compact' }`. */
  readonly compactConfig?: Record<string, unknown>;
  /** The proposer seat (default `proposer`), the executor seat (default `executor`). */
  readonly proposer?: string;
  readonly executor?: string;
  /** The context label of the program block. Default `proposer program`. */
  readonly label?: string;
}

/** A printed output no environment would write by itself, so its presence in a prompt proves it came from the details. */
const MARK = 'tool-proposal-suite-mark';

/** The checks of the tool-proposal suite. */
export function toolProposalChecks(
  contribution: EnvironmentContribution,
  options: ToolProposalConformanceOptions = {},
): ConformanceCheck[] {
  const suite = toolProposalSuiteName(contribution);
  const config = options.config ?? {};
  const compact = options.compactConfig ?? { ...config, observation: 'compact' };
  const proposer = options.proposer ?? 'proposer';
  const executor = options.executor ?? 'executor';
  const label = options.label ?? 'proposer program';
  /** The executor's and the proposer's observations after the oracle's proposal, with or without tool details. */
  const afterProposal = async (cfg: Record<string, unknown>, withDetails: boolean) => {
    const env = contribution.create({ ...cfg });
    if (!env.oracle) throw new Error('the environment has no oracle to propose with');
    const s0 = env.reset(env.instance('test', 0, 1));
    const action = env.oracle(s0, proposer);
    const move: Move = {
      kind: 'action',
      action,
      text: '```python\nprint(1)\n```',
      ...(withDetails
        ? {
            details: {
              program: `print(${JSON.stringify(MARK)})`,
              language: 'python',
              stdout: `${MARK}\n`,
              stderr: '',
              verdict: 'ok',
              exitCode: 0,
            },
          }
        : {}),
    };
    const { state } = await env.step(s0, proposer, move);
    return { executor: env.observe(state, executor), proposer: env.observe(state, proposer) };
  };
  return [
    check(
      suite,
      "the executor's full observation shows the proposer's program and its output next to the proposal",
      async (fail) => {
        const obs = await afterProposal(config, true);
        const block = obs.executor.context.find((c) => c.label === label);
        if (!block) {
          fail(
            `no "${label}" context block; the labels are ${JSON.stringify(obs.executor.context.map((c) => c.label))}`,
          );
        } else {
          if (!block.text.includes(`print("${MARK}")`))
            fail(`the "${label}" block does not show the program: ${JSON.stringify(block.text.slice(0, 200))}`);
          if (!block.text.includes(`${MARK}\n`))
            fail(`the "${label}" block does not show the output: ${JSON.stringify(block.text.slice(0, 200))}`);
        }
        if (!obs.executor.context.some((c) => c.label === 'proposal')) fail('the proposal block is missing');
        if (obs.proposer.context.some((c) => c.label === label))
          fail(`the proposer's own observation shows a "${label}" block`);
      },
    ),
    check(
      suite,
      'the compact observation leaves the program out (the proposal line carries its output)',
      async (fail) => {
        const obs = await afterProposal(compact, true);
        if (obs.executor.context.some((c) => c.label === label)) fail(`the compact observation has a "${label}" block`);
        if (!obs.executor.context.some((c) => c.label === 'proposal')) fail('the proposal block is missing');
      },
    ),
    check(suite, "a proposal without tool details (a planner's) gets no program block", async (fail) => {
      const obs = await afterProposal(config, false);
      if (obs.executor.context.some((c) => c.label === label)) fail(`a "${label}" block without tool details`);
    }),
  ];
}

/** The suite's name for a contribution. */
function toolProposalSuiteName(contribution: EnvironmentContribution): string {
  return `tool proposals of ${contribution.id}`;
}

/** Registers the tool-proposal suite as mocha tests. */
export function toolProposalConformance(
  contribution: EnvironmentContribution,
  options: ToolProposalConformanceOptions = {},
): void {
  const suite = toolProposalSuiteName(contribution);
  registerChecks(suite, () => guardedChecks(suite, () => toolProposalChecks(contribution, options)));
}

/** Runs the tool-proposal suite and returns every failure. */
export async function checkToolProposalConformance(
  contribution: EnvironmentContribution,
  options: ToolProposalConformanceOptions = {},
): Promise<ConformanceFailure[]> {
  const suite = toolProposalSuiteName(contribution);
  return runChecks(guardedChecks(suite, () => toolProposalChecks(contribution, options)));
}
