import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { json, ROOT, troupe } from '../packages/cli/test/helpers/cli.js';

const example = join(ROOT, 'examples', 'plan-path.yaml');

/** What `troupe run --json` prints. */
interface RunSummary {
  episodes: number;
  success_rate: number;
  mean_reward: Record<string, number>;
  mean_turns: number;
  samples: number;
  trace_records: number;
}

describe('troupe CLI (end to end, from source)', function () {
  this.timeout(180_000);

  describe('validate', () => {
    it('accepts the example specs', async () => {
      const specs = readdirSync(join(ROOT, 'examples'))
        .filter((f) => f.endsWith('.yaml'))
        .map((f) => join('examples', f));
      assert.ok(specs.length >= 1);
      const r = await troupe(['validate', ...specs, '--json']);
      const out = json<{ ok: boolean; files: { file: string; ok: boolean; issues: unknown[] }[] }>(r);
      assert.deepEqual(
        out.files.filter((f) => !f.ok),
        [],
        r.stdout,
      );
      assert.equal(out.ok, true);
      assert.equal(r.code, 0);
    });

    it('rejects every broken spec with file:line:col errors and exit code 1', async () => {
      const broken = readdirSync(join(ROOT, 'examples', 'broken')).filter((f) => f.endsWith('.yaml'));
      assert.ok(broken.length >= 3);
      for (const f of broken) {
        const r = await troupe(['validate', join('examples', 'broken', f)]);
        assert.equal(r.code, 1, `${f} should be rejected:\n${r.stdout}${r.stderr}`);
        assert.match(
          r.stdout,
          new RegExp(`examples/broken/${f.replace('.', '\\.')}:\\d+:\\d+ \\S+: `),
          `${f}: no file:line:col issue in\n${r.stdout}`,
        );
      }
    });

    it('checks the training settings as train reads them: each problem located, with what the team has', async () => {
      const r = await troupe(['validate', join('examples', 'broken', 'training-settings.yaml')]);
      assert.equal(r.code, 1);
      assert.match(
        r.stdout,
        /training-settings\.yaml:6:19 algorithm\.seatBranches\.coder: no seat 'coder' in 'seats' \(the team's seats: proposer, executor\)/,
      );
      assert.match(
        r.stdout,
        /training-settings\.yaml:7:12 algorithm\.freeze\[0\]: no policy 'planner' in 'policies' \(the team's policies: proposer, executor\)/,
      );
      const dir = mkdtempSync(join(tmpdir(), 'troupe-cli-'));
      try {
        writeFileSync(join(dir, 'team.yaml'), 'extends: default-team\nalgorithm:\n  lrr: 3\n');
        const typo = await troupe(['validate', join(dir, 'team.yaml')]);
        assert.equal(typo.code, 1);
        assert.match(typo.stdout, /team\.yaml:3:3 algorithm\.lrr: unknown key \(did you mean "lr"\?\)/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('warns about an unisolated sandbox, and refuses sandbox limits beyond 2^31 - 1, both located', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'troupe-cli-'));
      try {
        const code = readFileSync(join(ROOT, 'examples', 'code.yaml'), 'utf8');
        const seats = '    seats: [coder, tester]';
        assert.ok(code.includes(seats), 'fixture edit must apply');
        writeFileSync(
          join(dir, 'loose.yaml'),
          code.replace(seats, `${seats}\n    sandbox: { allowUnisolated: true, isolation: none }`),
        );
        const loose = await troupe(['validate', join(dir, 'loose.yaml')]);
        assert.equal(loose.code, 0, loose.stdout);
        assert.match(
          loose.stdout,
          /loose\.yaml: ok, 1 warning\n {2}warning: \S*loose\.yaml:\d+:\d+ environment\.config\.sandbox\.allowUnisolated: .*WITHOUT isolation/,
        );
        assert.ok(code.includes('wallMs: 5000'), 'fixture edit must apply');
        writeFileSync(join(dir, 'huge.yaml'), code.replace('wallMs: 5000', 'wallMs: 2147483648'));
        const huge = await troupe(['validate', join(dir, 'huge.yaml')]);
        assert.equal(huge.code, 1);
        assert.match(huge.stdout, /huge\.yaml:\d+:\d+ environment\.config\.limits\.wallMs: /);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('names the key path and suggests the intended policy name', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'troupe-cli-'));
      try {
        const text = readFileSync(example, 'utf8').replace(
          'policy: shared\n    sampling: { temperature: 0, topP: 1, topK: 0, maxTokens: 64 }\n  executor',
          'policy: sharde\n    sampling: { temperature: 0, topP: 1, topK: 0, maxTokens: 64 }\n  executor',
        );
        assert.notEqual(text, readFileSync(example, 'utf8'), 'fixture edit must apply');
        writeFileSync(join(dir, 'team.yaml'), text);
        const r = await troupe(['validate', join(dir, 'team.yaml')]);
        assert.equal(r.code, 1);
        assert.match(r.stdout, /team\.yaml:\d+:\d+ seats\.proposer\.policy: .*"shared"/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('run', () => {
    it('the oracle solves every one of 200 episodes', async () => {
      const r = await troupe(['run', example, '--episodes', '200', '--policy', 'oracle', '--json']);
      assert.equal(r.code, 0, r.stderr);
      const out = json<RunSummary>(r);
      assert.equal(out.episodes, 200);
      assert.equal(out.success_rate, 1);
      assert.deepEqual(Object.keys(out.mean_reward).sort(), ['executor', 'proposer']);
    });

    it('a random team succeeds rarely, and the trace holds one record per agent turn', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'troupe-cli-'));
      try {
        const trace = join(dir, 'trace.jsonl');
        const r = await troupe(['run', example, '--episodes', '100', '--policy', 'random', '--json', '--trace', trace]);
        assert.equal(r.code, 0, r.stderr);
        const out = json<RunSummary>(r);
        assert.ok(out.success_rate < 0.6, `random success ${out.success_rate}`);
        const records = readFileSync(trace, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        assert.equal(records.length, out.samples);
        assert.equal(records.length, out.trace_records);
        const turnsPlayed = records.filter((x) => x.seat === 'executor').length;
        assert.ok(Math.abs(turnsPlayed / 100 - out.mean_turns) < 1e-9, 'one executor record per turn played');
        for (const rec of records) {
          for (const key of [
            'instanceUid',
            'split',
            'turn',
            'seat',
            'role',
            'policy',
            'policyVersion',
            'branch',
            'prompt',
            'completion',
            'reward',
            'selected',
            'done',
            'success',
          ]) {
            assert.ok(key in rec, `trace record lacks ${key}`);
          }
          assert.equal(rec.split, 'test');
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('usage errors exit with code 2', async () => {
      assert.equal((await troupe(['run'])).code, 2);
      assert.equal((await troupe(['run', example, '--episodes', 'many'])).code, 2);
      assert.equal((await troupe(['run', example, '--split', 'dev'])).code, 2);
    });

    it('a missing spec file is a clear failure (exit 1), not a stack trace', async () => {
      const r = await troupe(['run', 'no/such/team.yaml', '--policy', 'oracle']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /no\/such\/team\.yaml/);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    });
  });

  describe('env sample', () => {
    it('test instances are solvable by the oracle and none appears in the train split', async () => {
      const r = await troupe(['env', 'sample', 'plan-path', '--split', 'test', '--count', '50', '--json']);
      assert.equal(r.code, 0, r.stderr);
      const out = json<{
        count: number;
        oracle_success_rate: number;
        disjoint_from_train: { overlaps: unknown[]; checkedTrain: number };
        instances: { key: string }[];
      }>(r);
      assert.equal(out.count, 50);
      assert.equal(out.oracle_success_rate, 1);
      assert.deepEqual(out.disjoint_from_train.overlaps, []);
      assert.ok(out.disjoint_from_train.checkedTrain >= 1000);
      const keys = new Set(out.instances.map((x) => x.key));
      assert.equal(keys.size, 50, 'instances are distinct');
    });
  });

  describe('plugins', () => {
    let project: string;
    const marker = () => join(project, 'EXECUTED');
    before(() => {
      project = mkdtempSync(join(tmpdir(), 'troupe-plugins-'));
      const pkg = join(project, 'node_modules', 'troupe-env-broken');
      mkdirSync(pkg, { recursive: true });
      writeFileSync(
        join(pkg, 'package.json'),
        JSON.stringify({
          name: 'troupe-env-broken',
          version: '1.0.0',
          type: 'module',
          troupe: {
            apiVersion: 1,
            kernel: '^0.1.0',
            module: './module.js',
            contributes: { environments: [{ id: 'Broken Id!' }] },
          },
        }),
      );
      writeFileSync(
        join(pkg, 'module.js'),
        `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker())}, 'ran');\nexport default null;\n`,
      );
    });
    after(() => rmSync(project, { recursive: true, force: true }));

    it('ls lists the official plugins with their contributions and origin', async () => {
      const r = await troupe(['plugins', 'ls', '--json']);
      assert.equal(r.code, 0, r.stderr);
      const out = json<{ plugins: { name: string; origin: string; contributes: Record<string, string[]> }[] }>(r);
      const planPath = out.plugins.find((p) => p.name === '@troupe/env-plan-path');
      assert.ok(planPath, 'plan-path is listed');
      assert.equal(planPath.origin, 'official');
      assert.deepEqual(planPath.contributes.environments, ['plan-path-v0']);
    });

    it('a broken manifest is reported without running the plugin code', async () => {
      const r = await troupe(['plugins', 'ls', '--json', '--dir', project]);
      assert.equal(r.code, 0, r.stderr);
      const out = json<{ plugins: { name: string; problem: string | null }[] }>(r);
      const broken = out.plugins.find((p) => p.name === 'troupe-env-broken');
      assert.ok(broken, 'the broken plugin is listed');
      assert.match(broken.problem ?? '', /troupe-env-broken/);
      assert.equal(existsSync(marker()), false, 'the module must not be imported');

      const spec = readFileSync(example, 'utf8').replace('id: plan-path ', 'id: broken ');
      writeFileSync(join(project, 'team.yaml'), spec);
      const v = await troupe(['validate', join(project, 'team.yaml')], { cwd: project });
      assert.equal(v.code, 1);
      assert.match(v.stdout, /troupe-env-broken/);
      assert.equal(existsSync(marker()), false, 'validate must not import a plugin whose manifest is invalid');
    });
  });

  it('doctor reports Node, the tfjs backend and the sandbox', async () => {
    const r = await troupe(['doctor', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = json<{
      node: { version: string };
      tfjs: { backend: string };
      webgpu: null | {
        available: boolean;
        autoPick: boolean;
        detail: string;
        adapter?: { isFallbackAdapter: boolean };
      };
      sandbox: { isolation: string; details: { holds: Record<string, string[]> } };
    }>(r);
    assert.equal(out.node.version, process.versions.node);
    assert.ok(['tensorflow', 'webgpu', 'wasm', 'cpu'].includes(out.tfjs.backend), JSON.stringify(out.tfjs));
    // the WebGPU section: the adapter when Dawn finds one; a software (fallback) adapter is never auto-picked
    if (out.webgpu) {
      assert.ok(out.webgpu.detail.length > 0);
      if (out.webgpu.available) assert.equal(typeof out.webgpu.adapter?.isFallbackAdapter, 'boolean');
      if (out.webgpu.adapter?.isFallbackAdapter) assert.equal(out.webgpu.autoPick, false);
    }
    assert.ok(out.sandbox.isolation, JSON.stringify(out.sandbox));
    // what holds, said for the isolation runs get and for unisolated runs: never a private uid that is not there
    const holds = out.sandbox.details.holds;
    assert.match(holds.none!.join('\n'), /NOT isolated/);
    assert.match(holds.none!.join('\n'), process.getuid?.() === 0 ? /dropped from root/ : /NOT dropped/);
    if (out.sandbox.isolation !== 'unavailable')
      assert.match(holds[out.sandbox.isolation]!.join('\n'), /no network.*\n(.*\n)*.*descriptors/);
    const text = await troupe(['doctor']);
    assert.match(text.stdout, /what holds under|runs are refused unless allowUnisolated/);
  });
});
