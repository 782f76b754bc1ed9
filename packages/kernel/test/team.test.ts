import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ContainerModule } from 'inversify';
import {
  ANY_ACTION_TYPE,
  PolicyContribution,
  producesActionType,
  type PolicyContribution as PolicyContributionT,
} from '../src/contracts/index.js';
import { PluginHost } from '../src/plugins/index.js';
import {
  SpecError,
  checkTeamAgainstPlugins,
  formatIssue,
  listPresets,
  loadTeamSpec,
  parseTeamSpec,
  resolveTrainerConfig,
  rewardConfigOf,
  specLocation,
  validateTeamFile,
  type SpecIssue,
} from '../src/team/index.js';
import { fakeProject } from './fixtures/plugins/helpers.js';

const SPECS = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'specs');

function specError(fn: () => unknown): SpecError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof SpecError, `expected a SpecError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a SpecError');
}

/** Compact `file:line:col path: message (hint)` lines, with the file as a base name. */
const lines = (issues: readonly SpecIssue[]): string[] =>
  issues.map((i) => formatIssue({ ...i, file: i.file.split('/').pop()! }));

describe('team specs: loading', () => {
  it('loads a complete spec, filling defaults', () => {
    const spec = loadTeamSpec(join(SPECS, 'good.yaml'));
    assert.equal(spec.name, 'grid-pair');
    assert.equal(spec.file, join(SPECS, 'good.yaml'));
    assert.equal(spec.seed, 7);
    assert.deepEqual(spec.environment, { id: 'grid', config: { size: 4 } });
    assert.deepEqual(spec.seats.proposer, {
      role: 'mover',
      roleConfig: {},
      policy: 'shared',
      sampling: { temperature: 1, topP: 1, topK: 0, maxTokens: 48 },
    });
    assert.deepEqual(spec.seats.executor!.sampling.stop, ['\n\n']);
    assert.deepEqual(spec.rewards.seats.executor, { alpha: 1, weights: { local: 0.5 }, config: {} });
    assert.deepEqual(spec.rewards.seats.proposer, { alpha: 1, weights: {}, config: { local: 'proposal_reward' } });
    assert.equal(spec.algorithm.learningRate, 0.001, 'extra algorithm keys are kept for the trainer');
    assert.deepEqual(spec.evaluation, { split: 'validation', episodes: 20, baseline: true });
    assert.deepEqual(Object.keys(spec), [
      'name',
      'file',
      'seed',
      'environment',
      'seats',
      'policies',
      'rewards',
      'algorithm',
      'evaluation',
    ]);
  });

  it('removes a warm start inherited through extends with warmStart: null', () => {
    assert.ok(resolveTrainerConfig(parseTeamSpec('extends: sokoban-team\n')).warmStart, 'the preset has a warm start');
    const spec = parseTeamSpec('extends: sokoban-team\nalgorithm: { warmStart: null }\n');
    assert.equal(spec.algorithm.warmStart, null);
    assert.equal(resolveTrainerConfig(spec).warmStart, undefined);
  });

  it('takes algorithm and sampling from a preset, and a seat overrides one sampling key', () => {
    assert.ok(listPresets().includes('at-grpo'));
    const spec = loadTeamSpec(join(SPECS, 'with-preset.yaml'));
    assert.equal(spec.name, 'with-preset', 'the name defaults to the file name');
    assert.equal(spec.seed, 0);
    assert.deepEqual(spec.algorithm, { name: 'at-grpo', branches: 4, batchSize: 8, steps: 3, concurrency: 4 });
    assert.deepEqual(spec.seats.proposer!.sampling, { temperature: 1, topP: 1, topK: 0, maxTokens: 64 });
    assert.deepEqual(spec.seats.executor!.sampling, { temperature: 0.7, topP: 1, topK: 0, maxTokens: 64 });
    assert.deepEqual(spec.evaluation, { split: 'test', episodes: 100, baseline: true });
    assert.equal('seatDefaults' in spec, false);
    assert.equal('extends' in spec, false);
  });

  it('merges extends deeply: maps merge, lists and scalars replace', () => {
    const spec = loadTeamSpec(join(SPECS, 'child.yaml'));
    assert.equal(spec.name, 'child');
    assert.equal(spec.seed, 1);
    assert.deepEqual(spec.environment.config, { size: 6, turns: 3 });
    assert.deepEqual(spec.seats.proposer!.sampling.stop, ['?']);
    assert.equal(spec.seats.proposer!.policy, 'shared');
    assert.equal(spec.seats.executor!.policy, 'solo');
    assert.deepEqual(Object.keys(spec.policies), ['shared', 'solo']);
    assert.equal(spec.algorithm.name, 'none');
  });

  it('chains presets (grpo-naive extends at-grpo)', () => {
    const spec = parseTeamSpec(
      'extends: grpo-naive\nenvironment: { id: grid }\npolicies: { p: { kind: oracle } }\nseats: { a: { role: r, policy: p } }\nrewards: { id: signals }\n',
    );
    assert.equal(spec.file, '<embedded>');
    assert.equal(spec.name, 'team');
    assert.equal(spec.algorithm.name, 'grpo-naive');
    assert.equal(spec.algorithm.branches, 4);
    assert.equal(spec.seats.a!.sampling.temperature, 1);
  });

  it('locates keys of a loaded spec', () => {
    const spec = loadTeamSpec(join(SPECS, 'good.yaml'));
    assert.deepEqual(specLocation(spec, ['seats', 'executor', 'policy']), {
      file: join(SPECS, 'good.yaml'),
      line: 17,
      col: 13,
    });
    assert.deepEqual(specLocation(spec, ['seats', 'executor'], { key: true }), {
      file: join(SPECS, 'good.yaml'),
      line: 14,
      col: 3,
    });
  });
});

describe('team specs: errors with file:line:col', () => {
  it('reports an unknown policy with a did-you-mean, and reward seats that do not exist', () => {
    const error = specError(() => loadTeamSpec(join(SPECS, 'bad-policy.yaml')));
    assert.deepEqual(lines(error.issues), [
      'bad-policy.yaml:12:13 seats.executor.policy: unknown policy "sharde" (did you mean "shared"?)',
      'bad-policy.yaml:17:5 rewards.seats.exec: unknown seat "exec" (did you mean "executor"?)',
    ]);
    assert.match(error.message, /team spec .*bad-policy\.yaml has 2 problems/);
  });

  it('reports every schema problem at once, unknown keys at the key', () => {
    const error = specError(() => loadTeamSpec(join(SPECS, 'bad-schema.yaml')));
    assert.deepEqual(lines(error.issues), [
      'bad-schema.yaml:8:13 seats.proposer.policy: must be string',
      'bad-schema.yaml:9:39 seats.proposer.sampling.topP: must be <= 1 (allowed: above 0, at most 1; got 2)',
      'bad-schema.yaml:13:27 rewards.seats.proposer.local: unknown key (term-specific settings go under config: rewards.seats.proposer.config.local)',
      'bad-schema.yaml:14:1 algorithim: unknown key (did you mean "algorithm"?)',
      'bad-schema.yaml:15:22 evaluation.split: must be one of "validation", "test"',
    ]);
  });

  it('requires explicit sampling and says where it may come from', () => {
    const error = specError(() => loadTeamSpec(join(SPECS, 'no-sampling.yaml')));
    const [first, ...rest] = error.issues;
    assert.equal(first!.path, 'seats.proposer.sampling');
    assert.equal(first!.message, 'is required');
    assert.match(first!.hint!, /seatDefaults\.sampling.*extends: at-grpo/);
    assert.deepEqual(
      rest.map((i) => i.path),
      ['seats.executor.sampling.topP', 'seats.executor.sampling.topK', 'seats.executor.sampling.maxTokens'],
    );
  });

  it('reports YAML syntax errors with their position', () => {
    const error = specError(() => loadTeamSpec(join(SPECS, 'syntax-error.yaml')));
    assert.deepEqual(
      lines(error.issues),
      [
        'syntax-error.yaml:3:7 (root): YAML syntax error: Nested mappings are not allowed in compact mappings (fix the YAML syntax (indentation, quotes, colons))',
      ],
      'one mistake, one problem (the parser also reports it as a multi-line implicit key)',
    );
  });

  it('reports separate YAML syntax errors on separate lines', () => {
    const error = specError(() =>
      parseTeamSpec('name: x\nenvironment: { id: grid\nseats: [\n', join(SPECS, 'inline.yaml')),
    );
    assert.deepEqual(
      error.issues.map((i) => i.line),
      [3, 4],
    );
  });

  it('detects extends cycles', () => {
    const error = specError(() => loadTeamSpec(join(SPECS, 'cycle-a.yaml')));
    assert.deepEqual(lines(error.issues), [
      'cycle-b.yaml:1:10 extends: extends cycle: cycle-a.yaml → cycle-b.yaml → cycle-a.yaml (remove one of the extends)',
    ]);
  });

  it('reports unknown presets and missing base files', () => {
    const error = specError(() => loadTeamSpec(join(SPECS, 'bad-extends.yaml')));
    assert.equal(error.issues.length, 2);
    assert.equal(
      formatIssue({ ...error.issues[0]!, file: 'bad-extends.yaml' }),
      'bad-extends.yaml:1:11 extends[0]: unknown preset "at-grpoo" (did you mean "at-grpo"?)',
    );
    assert.match(error.issues[1]!.message, /^no such file: \.\/missing-base\.yaml/);
    assert.deepEqual([error.issues[1]!.line, error.issues[1]!.col], [1, 21]);
  });

  it('points at the base file when the bad value came from it', () => {
    const error = specError(() => loadTeamSpec(join(SPECS, 'child-of-broken-base.yaml')));
    assert.deepEqual(lines(error.issues), [
      'broken-base.yaml:2:7 seed: must be >= 0 (allowed: from 0 to 4294967295; got -3)',
    ]);
    assert.equal(error.issues[0]!.file, join(SPECS, 'broken-base.yaml'));
  });

  it('reports a mistyped key once, at the typo, without a follow-on "is required" for the key it meant', () => {
    const error = specError(() =>
      parseTeamSpec(
        'environment: { id: grid }\npolicies: { p: { kind: oracle } }\nseats:\n  a: { role: r, polcy: p, sampling: { temperature: 1, topP: 1, topK: 0, maxTokens: 4 } }\n' +
          '  b:\n    role: r\n    policy: p\n    sampling: { temprature: 1, topP: 1, topK: 0, maxTokens: 4 }\nrewards: { id: s }\n',
        join(SPECS, 'inline.yaml'),
      ),
    );
    assert.deepEqual(lines(error.issues), [
      'inline.yaml:4:17 seats.a.polcy: unknown key (did you mean "policy"?)',
      'inline.yaml:8:17 seats.b.sampling.temprature: unknown key (did you mean "temperature"?)',
    ]);
  });

  it('still reports a required key as missing when no unknown key resembles it', () => {
    const error = specError(() =>
      parseTeamSpec(
        'environment: { id: grid }\npolicies: { p: { kind: oracle } }\nseats:\n  a: { role: r, banana: p, sampling: { temperature: 1, topP: 1, topK: 0, maxTokens: 4 } }\nrewards: { id: s }\n',
        join(SPECS, 'inline.yaml'),
      ),
    );
    assert.deepEqual(
      lines(error.issues).map((l) => l.replace(/ \(.*$/, '')),
      ['inline.yaml:4:6 seats.a.policy: is required', 'inline.yaml:4:17 seats.a.banana: unknown key'],
    );
  });

  it('reports a missing file', () => {
    const missing = specError(() => loadTeamSpec(join(SPECS, 'nope.yaml')));
    assert.equal(missing.issues[0]!.message, 'no such file');
  });

  it('rejects a document that is not a mapping', () => {
    const error = specError(() => parseTeamSpec('- just\n- a list\n', join(SPECS, 'list.yaml')));
    assert.match(formatIssue(error.issues[0]!), /list\.yaml:1:1 \(root\): must be a mapping/);
  });
});

describe('team specs: checks against plugins', () => {
  let project: string;
  const oracle: PolicyContributionT = {
    id: 'oracle',
    description: 'fake oracle',
    configSchema: {
      type: 'object',
      additionalProperties: false,
      properties: { greedy: { type: 'boolean', default: true } },
    },
    create: (name) => ({ name, kind: 'oracle', version: 0, generate: async () => [] }),
  };
  const newHost = () =>
    new PluginHost({
      baseDirs: [project],
      builtins: [
        {
          name: 'test policies',
          module: new ContainerModule((bind) => {
            bind(PolicyContribution).toConstantValue(oracle);
          }),
        },
      ],
    });
  before(() => {
    project = fakeProject({
      'troupe-env-grid': 'env-grid',
      '@acme/troupe-role-mover': 'role-mover',
      'troupe-reward-score': 'reward-score',
    });
  });
  after(() => rmSync(project, { recursive: true, force: true }));

  it('validates a file in one call: spec problems first, plugin problems when the spec loads', async () => {
    const issues = await validateTeamFile(join(SPECS, 'bad-policy.yaml'), newHost());
    assert.deepEqual(
      issues.map((i) => i.path),
      ['seats.executor.policy', 'rewards.seats.exec'],
    );
    const error = specError(() => loadTeamSpec(join(SPECS, 'bad-policy.yaml')));
    assert.deepEqual(
      (JSON.parse(JSON.stringify(error)) as { issues: unknown[] }).issues,
      JSON.parse(JSON.stringify(error.issues)),
    );
  });

  it('accepts a consistent team, loading its plugins by shorthand', async () => {
    const file = join(project, 'team.yaml');
    writeFileSync(
      file,
      [
        'extends: at-grpo',
        'environment: { id: grid, config: { size: 3 } }',
        'policies: { shared: { kind: oracle } }',
        'seatDefaults: { role: "@acme/mover", policy: shared }',
        'seats: { proposer: {}, executor: {} }',
        'rewards: { id: score, config: { team: goal }, seats: { executor: { weights: { team: 2 } } } }',
        '',
      ].join('\n'),
    );
    const spec = loadTeamSpec(file);
    const host = newHost();
    assert.deepEqual(await checkTeamAgainstPlugins(spec, host), []);
    assert.deepEqual(
      host.plugins().map((p) => p.name),
      ['test policies', 'troupe-env-grid', '@acme/troupe-role-mover', 'troupe-reward-score'],
    );
  });

  it('runs the reward’s own checks against the environment’s declared signals', async () => {
    const spec = parseTeamSpec(
      [
        'extends: at-grpo',
        'environment: { id: grid }',
        'policies: { shared: { kind: oracle } }',
        'seatDefaults: { role: "@acme/mover", policy: shared }',
        'seats: { proposer: {}, executor: {} }',
        'rewards: { id: score, config: { team: gaol } }',
        '',
      ].join('\n'),
      join(project, 'signals.yaml'),
    );
    assert.deepEqual(lines(await checkTeamAgainstPlugins(spec, newHost())), [
      'signals.yaml:6:39 rewards.config.team: signal "gaol" is not produced by grid-v1 (available signals: goal, moved)',
    ]);
  });

  it('reports seats, action types, configs and terms at the offending YAML node', async () => {
    const file = join(project, 'bad-team.yaml');
    writeFileSync(
      file,
      [
        'extends: at-grpo', // 1
        'environment:', // 2
        '  id: grid', // 3
        '  config: { size: 50, colour: red }', // 4
        'policies:', // 5
        '  shared: { kind: oracle, greedy: maybe }', // 6
        '  other: { kind: telepathy }', // 7
        'seats:', // 8
        '  proposer: { role: "@acme/mover", policy: shared }', // 9
        '  execut: { role: "@acme/mover", policy: other }', // 10
        '  watcher: { role: "@acme/mover", policy: shared, roleConfig: { verbose: 1 } }', // 11
        'rewards:', // 12
        '  id: score', // 13
        '  seats: { proposer: { weights: { tem: 1 }, config: { bonus: x } } }', // 14
        '',
      ].join('\n'),
    );
    const spec = loadTeamSpec(file);
    const host = newHost();
    await host.load('troupe-env-grid');
    const issues = lines(await checkTeamAgainstPlugins(spec, host));
    assert.deepEqual(issues.slice(0, 2), [
      'bad-team.yaml:4:19 environment.config.size: must be <= 10 (allowed: from 2 to 10; got 50) (see the config schema of grid-v1)',
      'bad-team.yaml:4:23 environment.config.colour: unknown key (allowed keys: size, turns, reward)',
    ]);
    assert.ok(
      issues.some((l) => l.startsWith('bad-team.yaml:11:74 seats.watcher.roleConfig.verbose: must be boolean')),
      issues.join('\n'),
    );
    assert.ok(
      issues.some((l) => l.startsWith('bad-team.yaml:6:35 policies.shared.greedy: must be boolean')),
      issues.join('\n'),
    );
    assert.ok(
      issues.some((l) =>
        l.startsWith(
          'bad-team.yaml:7:18 policies.other.kind: plugin telepathy: no policy plugin named "telepathy" is installed',
        ),
      ),
      issues.join('\n'),
    );
    assert.ok(
      issues.some((l) => l.startsWith('bad-team.yaml:13:3 rewards.config.team: is required')),
      issues.join('\n'),
    );
    assert.ok(
      issues.includes(
        'bad-team.yaml:14:35 rewards.seats.proposer.weights.tem: reward score-v0 has no term "tem" (did you mean "team"?)',
      ),
      issues.join('\n'),
    );
    assert.ok(
      issues.some((l) => l.startsWith('bad-team.yaml:14:62 rewards.seats.proposer.config.bonus: must be number')),
      issues.join('\n'),
    );
  });

  it('reports missing and unknown seats, and a role that cannot produce the seat’s action type', async () => {
    const file = join(project, 'seats.yaml');
    writeFileSync(
      file,
      [
        'extends: at-grpo', // 1
        'environment: { id: grid-v0 }', // 2
        'policies: { shared: { kind: oracle } }', // 3
        'seats:', // 4
        '  proposer: { role: "@acme/troupe-role-mover", policy: shared }', // 5
        '  execut: { role: "@acme/mover", policy: shared }', // 6
        'rewards: { id: score, config: { team: goal } }', // 7
        '',
      ].join('\n'),
    );
    const host = newHost();
    await host.load('@acme/mover', { kind: 'role' });
    const spec = loadTeamSpec(file);
    // Make proposer use the role that produces text, not moves.
    const swapped = parseTeamSpec(
      [
        'extends: at-grpo',
        'environment: { id: grid-v0 }',
        'policies: { shared: { kind: oracle } }',
        'seats:',
        '  proposer: { role: talker, policy: shared }',
        '  executor: { role: mover, policy: shared }',
        'rewards: { id: score, config: { team: goal } }',
        '',
      ].join('\n'),
      join(project, 'swapped.yaml'),
    );
    assert.deepEqual(lines(await checkTeamAgainstPlugins(spec, host)), [
      'seats.yaml:4:1 seats: missing seat "executor" (executes moves) required by environment grid-v0 (the environment\'s seats, in turn order: proposer, executor)',
      'seats.yaml:6:3 seats.execut: environment grid-v0 has no seat "execut" (did you mean "executor"?)',
    ]);
    assert.deepEqual(lines(await checkTeamAgainstPlugins(swapped, host)), [
      'swapped.yaml:5:21 seats.proposer.role: role talker-v0 produces text, but seat "proposer" of grid-v0 needs moves (use a role that produces moves: mover-v0)',
    ]);
  });
});

describe('team specs: which roles can play a seat', () => {
  it('a role plays a seat whose action type it names, or any seat when it produces ANY_ACTION_TYPE', () => {
    assert.equal(ANY_ACTION_TYPE, '*');
    assert.equal(producesActionType(['moves'], 'moves'), true);
    assert.equal(producesActionType(['moves', 'answer'], 'sudoku-grid'), false);
    assert.equal(producesActionType(['moves', ANY_ACTION_TYPE], 'sudoku-grid'), true);
    assert.equal(producesActionType([], 'moves'), false);
  });
});

describe('team specs: reward config', () => {
  it('passes per-seat reward configs under `seats` only when a seat has one', () => {
    const spec = loadTeamSpec(join(SPECS, 'good.yaml'));
    assert.deepEqual(rewardConfigOf(spec), {
      team: 'executed_reward',
      seats: { proposer: { local: 'proposal_reward' } },
    });
    const plain = loadTeamSpec(join(SPECS, 'with-preset.yaml'));
    assert.deepEqual(rewardConfigOf(plain), {});
  });
});
