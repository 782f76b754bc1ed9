import { join } from 'node:path';
import { PRESETS_DIR } from '@troupe/kernel';

/**
 * The embedded default team spec of `troupe train` with no SPEC (presets/default-team.yaml → plan-path-coder-team.yaml):
 * Plan-Path (5x5), a coder proposer whose Python program runs in the sandbox and a planner executor, played by two
 * tiny `tfjs-causal-lm` models (one per role, L3) with the shipped tiny tokenizer, a warm start on oracle
 * demonstrations (the coder's are the environment's oracle program), then AT-GRPO with constrained decoding.
 */
export const DEFAULT_TEAM_SPEC_FILE: string = join(PRESETS_DIR, 'default-team.yaml');
