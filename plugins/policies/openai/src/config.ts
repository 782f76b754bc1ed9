import type { JsonSchema } from '@troupe/kernel';
import { readConfigSchema } from '@troupe/kernel';

/** The validated config of one `kind: openai` policy (defaults filled by the plugin host). */
export interface OpenAiPolicyConfig {
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKeyEnv?: string;
  readonly maxConcurrency: number;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly supportsN: boolean;
  readonly logprobs: boolean;
  readonly returnTokenIds: boolean;
  readonly constrainedDecoding: 'none' | 'vllm' | 'sglang';
  readonly chatTemplateKwargs: Readonly<Record<string, unknown>>;
  readonly extraBody: Readonly<Record<string, unknown>>;
}

/** The JSON schema of the config (also the manifest's `configSchema` file). */
export const OPENAI_POLICY_CONFIG_SCHEMA: JsonSchema = readConfigSchema(
  new URL('../schemas/openai.config.json', import.meta.url),
);

/** Request fields the policy sets itself: `extraBody` may not override them. */
export const RESERVED_BODY_FIELDS: readonly string[] = [
  'model',
  'messages',
  'n',
  'seed',
  'stop',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'top_k',
  'logprobs',
  'return_token_ids',
  'chat_template_kwargs',
  'stream',
  'structured_outputs',
  'regex',
];

/** Fills the defaults of a config given without the plugin host (tests, programmatic use), as the schema states them. */
export function withDefaults(
  config: Partial<OpenAiPolicyConfig> & Pick<OpenAiPolicyConfig, 'baseUrl' | 'model'>,
): OpenAiPolicyConfig {
  return {
    maxConcurrency: 8,
    timeoutMs: 120_000,
    retries: 4,
    supportsN: false,
    logprobs: true,
    returnTokenIds: false,
    constrainedDecoding: 'none',
    chatTemplateKwargs: {},
    extraBody: {},
    ...config,
  };
}
