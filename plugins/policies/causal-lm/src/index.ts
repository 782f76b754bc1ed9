/**
 * @troupe/policy-causal-lm — the `tfjs-causal-lm` policy kind as a plugin. The policy itself (`CausalLmPolicy`, its
 * config schema, generation and training) lives in @troupe/lm, where the trainer reaches its internals; this package
 * only declares the kind in its manifest and binds it, so a team spec's `kind: tfjs-causal-lm` resolves like any plugin.
 */
export * from './module.js';
