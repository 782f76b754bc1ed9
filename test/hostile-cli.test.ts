/**
 * Hostile specs, flags and checkpoints through the CLI: each is refused with a located message and a plain exit code,
 * never an internal error or a stack trace.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CausalLM, initBackend, writeCheckpoint } from '@troupe/lm';
import { json, ROOT, troupe, type CliResult } from '../packages/cli/test/helpers/cli.js';
import { TINY_QWEN3 } from '../packages/lm/test/helpers/tiny-config.js';

const example = join(ROOT, 'examples', 'plan-path.yaml');

/** No internal error, no stack frame. */
function assertClean(r: CliResult): void {
  const out = r.stdout + r.stderr;
  assert.doesNotMatch(out, /internal error/, out);
  assert.doesNotMatch(out, /^\s+at .+:\d+:\d+\)?$/m, out);
}

describe('hostile inputs through the CLI', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-hostile-cli-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('troupe validate refuses each hostile spec at its line', async () => {
    let bomb = 'seatDefaults:\n  roleConfig:\n    l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n';
    for (let i = 1; i < 9; i++)
      bomb += `    l${i}: &l${i} [${Array(9)
        .fill(`*l${i - 1}`)
        .join(', ')}]\n`;
    const specs: Record<string, { text: string; expect: RegExp }> = {
      'bomb.yaml': {
        text: `extends: ${example}\n${bomb}`,
        expect: /bomb\.yaml:6:\d+ \(root\): aliases expand too much/,
      },
      'seed.yaml': {
        text: `extends: ${example}\nseed: 1e400\n`,
        expect: /seed\.yaml:2:7 seed: .*allowed: a finite number, from 0 to 4294967295; got Infinity/,
      },
      'penalty.yaml': {
        text: `extends: ${example}\nenvironment:\n  config:\n    malformedPenalty: -.inf\n`,
        expect: /penalty\.yaml:4:23 environment\.config\.malformedPenalty: .*from -1000000 to 1000000; got -Infinity/,
      },
      'zero.yaml': {
        text: 'extends: /dev/zero\n',
        expect: /zero\.yaml:1:10 extends: \/dev\/zero is a device, not a regular file/,
      },
      'proto.yaml': {
        text: `extends: ${example}\nevaluation:\n  __proto__: { episodes: 1 }\n`,
        expect: /proto\.yaml:3:3 evaluation\.__proto__: the key __proto__ is not allowed/,
      },
    };
    for (const [name, { text }] of Object.entries(specs)) writeFileSync(join(dir, name), text);
    const r = await troupe(['validate', ...Object.keys(specs).map((n) => join(dir, n))]);
    assertClean(r);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    for (const { expect } of Object.values(specs)) assert.match(r.stdout, expect);
    const verdicts = json<{ files: { ok: boolean }[] }>(
      await troupe(['validate', '--json', ...Object.keys(specs).map((n) => join(dir, n))]),
    );
    assert.deepEqual(
      verdicts.files.map((f) => f.ok),
      Object.keys(specs).map(() => false),
    );
  });

  it('number flags that set spec fields are range-checked', async () => {
    for (const [args, expect] of [
      [['run', example, '--episodes', '1e308'], /--episodes must be at most 1000000, got "1e308"/],
      [['eval', example, '--seed', '-1'], /--seed must be an integer from 0 to 4294967295, got "-1"/],
      [['train', example, '--steps', '1e12'], /--steps must be at most 10000000, got "1e12"/],
    ] as const) {
      const r = await troupe(args);
      assertClean(r);
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.match(r.stderr, expect);
    }
  });

  it('a hostile checkpoint named by a spec or by --model is refused naming the file', async () => {
    await initBackend();
    const cfg = TINY_QWEN3;
    const model = CausalLM.random(cfg, 1);
    const sharded = join(dir, 'sharded');
    const layers = join(dir, 'layers');
    try {
      await writeCheckpoint(sharded, cfg, model.exportTensors(), { maxShardBytes: 20_000 });
      await writeCheckpoint(layers, { ...cfg, num_hidden_layers: 1e9 }, model.exportTensors());
    } finally {
      model.dispose();
    }
    const index = join(sharded, 'model.safetensors.index.json');
    const map = JSON.parse(readFileSync(index, 'utf8')) as { weight_map: Record<string, string> };
    map.weight_map[Object.keys(map.weight_map)[0]!] = '../../../etc/passwd';
    writeFileSync(index, JSON.stringify(map));

    const gen = await troupe(['generate', '--model', sharded, '--tokenizer', 'tiny', '--prompt', 'hi']);
    assertClean(gen);
    assert.equal(gen.code, 1);
    assert.match(
      gen.stderr,
      /model\.safetensors\.index\.json: names the file "\.\.\/\.\.\/\.\.\/etc\/passwd", which lies outside the folder/,
    );

    writeFileSync(
      join(dir, 'lm.yaml'),
      `extends: ${example}\npolicies:\n  shared: { kind: tfjs-causal-lm, model: ${layers}, tokenizer: tiny }\n`,
    );
    const ev = await troupe(['eval', join(dir, 'lm.yaml'), '-n', '1']);
    assertClean(ev);
    assert.equal(ev.code, 1);
    assert.match(
      ev.stderr,
      /layers\/config\.json: 'num_hidden_layers' is 1000000000, over the largest supported value 1024/,
    );
  });
});
