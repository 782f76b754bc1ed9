import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRng, PluginHost, TokenizerCache } from '@troupe/kernel';
import { isCausalLmPolicy, tokenizerCache, type Tokenizer } from '@troupe/lm';

const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

describe('@troupe/policy-causal-lm', () => {
  it('is found by its kind from the manifest, and creates a trainable causal LM policy', async () => {
    // No package is named after the kind: the host finds the plugin whose manifest declares `tfjs-causal-lm`.
    const host = new PluginHost({ baseDirs: [PACKAGE_DIR] });
    const entry = await host.ensure('policies', 'tfjs-causal-lm');
    assert.equal(entry.plugin, '@troupe/policy-causal-lm');
    const policy = await host.createPolicy(
      'tfjs-causal-lm',
      'shared',
      { kind: 'tfjs-causal-lm', preset: 'tiny', seed: 3 },
      { baseDir: PACKAGE_DIR, seed: 0, rng: createRng(0) },
      'policies.shared',
    );
    try {
      assert.ok(isCausalLmPolicy(policy));
      assert.equal(policy.kind, 'tfjs-causal-lm');
      assert.equal(policy.model.config.vocabSize, 512);
    } finally {
      await policy.dispose?.();
    }
  });

  it('takes its tokenizer from the tokenizer cache the host binds', async () => {
    const asked: string[] = [];
    const recording: TokenizerCache<Tokenizer> = { load: (dir) => (asked.push(dir), tokenizerCache.load(dir)) };
    const host = new PluginHost({ baseDirs: [PACKAGE_DIR] });
    host.container.bind(TokenizerCache).toConstantValue(recording);
    await host.ensure('policies', 'tfjs-causal-lm');
    const policy = await host.createPolicy(
      'tfjs-causal-lm',
      'shared',
      { kind: 'tfjs-causal-lm', preset: 'tiny', seed: 3 },
      { baseDir: PACKAGE_DIR, seed: 0, rng: createRng(0) },
      'policies.shared',
    );
    try {
      assert.deepEqual(asked, ['tiny']);
      assert.ok(isCausalLmPolicy(policy));
      assert.equal(
        policy.tokenizer,
        await tokenizerCache.load('tiny'),
        'the cached tokenizer, shared with every other load of the folder',
      );
    } finally {
      await policy.dispose?.();
    }
  });

  it('checks a config against the schema the policy gives, naming the key', async () => {
    const host = new PluginHost({ baseDirs: [PACKAGE_DIR] });
    await host.ensure('policies', 'tfjs-causal-lm');
    const { issues } = host.checkConfig('policies', 'tfjs-causal-lm', { preset: 'huge' });
    assert.equal(issues.length, 1);
    assert.deepEqual(issues[0]!.path, ['preset']);
  });
});
