import { fileURLToPath } from 'node:url';

/**
 * The embedded default team spec of `troupe train` with no SPEC: Plan-Path (5x5), proposer + executor played by two
 * tiny `tfjs-causal-lm` models (one per role, L3) with the shipped tiny tokenizer, a warm start on oracle
 * demonstrations, then AT-GRPO with constrained decoding to the planner grammar.
 */
export const DEFAULT_TEAM_SPEC_FILE: string = fileURLToPath(new URL('../../presets/default-team.yaml', import.meta.url));
