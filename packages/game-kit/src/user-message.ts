/**
 * The user message that role plugins build from an observation, in the shapes the built-in game roles share.
 */
import type { Observation } from '@troupe/kernel';

/** How {@link renderUserMessage} lays an observation out. */
export interface UserMessageOptions {
  /** Start with the task statement. Default true. */
  readonly includeTask?: boolean;
  /**
   * Only the state and one `label: text` line per context block: no task, no headings, no answer-format line (for
   * tiny byte-level models, where every character is a token). Default false.
   */
  readonly terse?: boolean;
  /**
   * In a terse message, the context lines first and the state last (default: the state first). A role that copies
   * the state into its answer (the coder writing the grid into its program) then finds it at the same distance
   * before its answer in every turn, however long the history: the easiest copy for a small model to learn.
   */
  readonly stateLast?: boolean;
  /** The answer format, quoted in a last `Answer with one final line: FORMAT` paragraph (not in terse messages). */
  readonly format: string;
}

/**
 * The task (unless `includeTask` is false), `Current state:` and the state, each context block under a `### label`
 * heading, then the answer format — paragraphs separated by blank lines. `terse`: the state and `label: text` lines
 * (the state last with `stateLast`).
 */
export function renderUserMessage(observation: Observation, options: UserMessageOptions): string {
  if (options.terse) {
    const context = observation.context.map((c) => `${c.label}: ${c.text}`);
    return (options.stateLast ? [...context, observation.state] : [observation.state, ...context]).join('\n');
  }
  const parts =
    options.includeTask === false
      ? [`Current state:\n${observation.state}`]
      : [observation.task.trim(), `Current state:\n${observation.state}`];
  for (const c of observation.context) parts.push(`### ${c.label}\n${c.text}`);
  parts.push(`Answer with one final line: ${options.format}`);
  return parts.join('\n\n');
}
