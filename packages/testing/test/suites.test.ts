import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import type { Observation, Transition } from '@troupe/kernel';
import type { ConformanceFailure } from '../src/index.js';
import {
  checkEnvironmentConformance,
  checkModuleConformance,
  checkOracleProgramConformance,
  checkRewardConformance,
  checkRoleConformance,
  checkSingleSeatConformance,
  checkToolProposalConformance,
  deepFreeze,
  playEpisode,
  runPythonPrograms,
} from '../src/index.js';
import type { ToyState } from './toy.js';
import { toyEnvironment, toyGame, toyReward, toyRole } from './toy.js';

const quick = { episodes: 2, seeds: [0], splitSamples: 60 };
const failedChecks = (failures: readonly ConformanceFailure[]): string[] =>
  [...new Set(failures.map((f) => f.check))].sort();

describe('environment suite', () => {
  it('a correct environment passes every check', async () => {
    const failures = await checkEnvironmentConformance(toyEnvironment(), {
      ...quick,
      stateView: (s) => (s as ToyState).n,
    });
    assert.deepEqual(failures, []);
  });

  const cases: [string, Parameters<typeof toyEnvironment>[0], string[]][] = [
    ['a step that mutates its input', { mutateState: true }, ['states are immutable and step is pure']],
    [
      'instances drawn with Math.random',
      { randomInstances: true },
      ['generates instances deterministically', 'rollouts are deterministic per seed'],
    ],
    ['splits that ignore the split name', { ignoreSplit: true }, ['splits are disjoint by instance content']],
    ['episodes that never end', { neverDone: true }, ['episodes end within maxTurns']],
    ['a NaN signal', { nanSignal: true }, ['signals are finite numbers (and the declared ones)']],
    [
      'a declared signal that steps do not return',
      { wrongSignals: true },
      ['signals are finite numbers (and the declared ones)'],
    ],
    ['an oracle that does nothing', { badOracle: true }, ['oracle play succeeds']],
    [
      'random actions outside the action type',
      { badRandomAction: true },
      ['actions of randomAction and oracle validate against the action types'],
    ],
    [
      'a seat with an undeclared action type',
      { undeclaredActionType: true },
      ['declares its id, seats and action types'],
    ],
  ];
  for (const [what, bugs, expected] of cases) {
    it(`catches ${what}`, async () => {
      const failures = await checkEnvironmentConformance(toyEnvironment(bugs), quick);
      for (const name of expected)
        assert.ok(
          failedChecks(failures).includes(name),
          `expected "${name}" to fail; failed: ${failedChecks(failures).join(' | ')}`,
        );
    });
  }

  it('catches observations that keep showing the initial state (with a stateView)', async () => {
    const failures = await checkEnvironmentConformance(toyEnvironment({ staleObservation: true }), {
      ...quick,
      stateView: (s) => (s as ToyState).n,
    });
    assert.deepEqual(failedChecks(failures), ['observations are well-formed and show the current state']);
    assert.match(failures[0]!.message, /state text did not/);
  });

  it('catches observations that never change, even without a stateView', async () => {
    const failures = await checkEnvironmentConformance(toyEnvironment({ staleObservation: true }), quick);
    assert.deepEqual(failedChecks(failures), ['observations are well-formed and show the current state']);
  });

  it('reports a contribution whose create throws as one failure instead of throwing', async () => {
    const broken = {
      ...toyEnvironment(),
      create: () => {
        throw new Error('bad config');
      },
    };
    const failures = await checkEnvironmentConformance(broken, quick);
    assert.equal(failures.length, 1);
    assert.match(failures[0]!.message, /bad config/);
  });

  it('playEpisode freezes states and stops at done', async () => {
    const env = toyEnvironment().create({});
    const r = await playEpisode(env, env.instance('train', 0, 0), (s, seat) => env.oracle!(s, seat));
    assert.equal(r.ended, true);
    assert.equal(r.success, true);
    assert.ok(r.steps.every((s) => Object.isFrozen(s.before)));
  });
});

describe('single-agent variant suite', () => {
  it('a two-seat game with a correct single-agent variant passes every check', async () => {
    assert.deepEqual(await checkSingleSeatConformance(toyGame()), []);
  });

  const cases: [string, Parameters<typeof toyGame>[0], string][] = [
    [
      'seat lists that are neither the team nor the executor',
      { acceptAnySeats: true },
      'any other seat list is a config error naming config.seats and the value given',
    ],
    [
      'a proposal shown to the lone executor',
      { proposalAlone: true },
      'the proposer seat does not exist, and the executor is never shown a proposal',
    ],
    [
      "other instances than the team's",
      { otherInstancesAlone: true },
      'plays the same instances as the team (the baseline is measured on the same tasks)',
    ],
    [
      'episodes that outlast maxTurns',
      { neverTruncate: true },
      'an episode ends after maxTurns executor turns (truncated, not solved)',
    ],
  ];
  for (const [what, bugs, expected] of cases) {
    it(`catches ${what}`, async () => {
      assert.deepEqual(failedChecks(await checkSingleSeatConformance(toyGame(bugs))), [expected]);
    });
  }
});

describe('oracle-program suite', () => {
  const parse = (stdout: string): unknown => JSON.parse(stdout.trim());
  const name = "run by Python, each oracle program prints the oracle's action (starting and later states)";

  it("programs that print the oracle's action pass", async () => {
    assert.deepEqual(await checkOracleProgramConformance(toyEnvironment(), { instances: 10, parse }), []);
  });
  const cases: [string, NonNullable<Parameters<typeof toyEnvironment>[0]>['programBug'], RegExp][] = [
    ['a program that prints another action', 'wrong', /printed -?\d+, the oracle's action is -?\d+/],
    ['a program that raises', 'crash', /raised ZeroDivisionError/],
    ['an environment that gives no programs', 'missing', /only 0 of \d+ \(state, seat\) pairs have a Python program/],
  ];
  for (const [what, bug, message] of cases) {
    it(`catches ${what}`, async () => {
      const failures = await checkOracleProgramConformance(toyEnvironment({ programBug: bug }), {
        instances: 10,
        parse,
      });
      assert.deepEqual(failedChecks(failures), [name]);
      assert.match(failures[0]!.message, message);
      assert.match(failures[0]!.message, /train instance \d+ \(seed 3\)|pairs/);
    });
  }

  it('runs programs in fresh namespaces; a clean exit() is not an error, exit(2) is', async () => {
    const runs = await runPythonPrograms(['x = 1\nprint(x)', 'print(x)', 'print(7)\nexit()', 'exit(2)']);
    assert.deepEqual(runs[0], { stdout: '1\n' });
    assert.match(runs[1]!.error!, /NameError/);
    assert.deepEqual(runs[2], { stdout: '7\n' });
    assert.equal(runs[3]!.error, 'SystemExit: 2');
  });
});

describe('tool-proposal suite', () => {
  it('a game that shows the program in the full observation only passes', async () => {
    assert.deepEqual(await checkToolProposalConformance(toyGame()), []);
  });
  const cases: [string, Parameters<typeof toyGame>[0], string][] = [
    [
      'a program never shown',
      { hideProgram: true },
      "the executor's full observation shows the proposer's program and its output next to the proposal",
    ],
    [
      'a program shown in the compact observation',
      { programInCompact: true },
      'the compact observation leaves the program out (the proposal line carries its output)',
    ],
  ];
  for (const [what, bugs, expected] of cases) {
    it(`catches ${what}`, async () => {
      assert.deepEqual(failedChecks(await checkToolProposalConformance(toyGame(bugs))), [expected]);
    });
  }
});

describe('role suite', () => {
  const observations: Observation[] = [
    { task: 'Reach 5.', state: 'Counter: 2', context: [{ label: 'hint', text: 'go up' }], turn: 0 },
  ];
  const base = {
    observations,
    actions: [-3, 0, 2],
    seats: [{ seat: 'agent', actionType: 'step' }],
    requireVerbatimState: false,
  };

  it('a correct role passes', async () => {
    assert.deepEqual(
      await checkRoleConformance(toyRole(), {
        ...base,
        observations: [{ ...observations[0]!, context: [] }],
        requireVerbatimState: true,
      }),
      [],
    );
  });
  const cases: [string, Parameters<typeof toyRole>[0], string, Partial<typeof base>?][] = [
    [
      'a parser that throws on garbage',
      { throwOnGarbage: true },
      'garbage text gives an invalid move and never throws',
    ],
    [
      'a parser that throws on some format-like text (fuzz)',
      { throwOnHash: true },
      'random and mutated texts never make parse throw',
    ],
    ['a parser that accepts garbage', { acceptAnything: true }, 'garbage text gives an invalid move and never throws'],
    ['a lossy render', { lossyRender: true }, 'render then parse gives the action back'],
    ['a non-deterministic prompt', { randomPrompt: true }, 'prompts are well-formed and deterministic'],
    [
      'a prompt that hides the state',
      { hideState: true },
      'prompts are well-formed and deterministic',
      { requireVerbatimState: true } as Partial<typeof base>,
    ],
    [
      'a grammar that rejects rendered actions',
      { wrongGrammar: true },
      'the output grammar accepts every rendered action',
    ],
  ];
  for (const [what, bugs, expected, extra] of cases) {
    it(`catches ${what}`, async () => {
      const failures = await checkRoleConformance(toyRole(bugs), { ...base, ...(extra ?? {}) });
      assert.ok(failedChecks(failures).includes(expected), `failed: ${failedChecks(failures).join(' | ')}`);
    });
  }
});

describe('reward suite', () => {
  const transitions: Transition[] = [
    {
      seat: 'agent',
      turn: 0,
      before: { n: 1 },
      move: { kind: 'action', action: 1, text: 'ANSWER 1' },
      result: {
        state: { n: 2 },
        done: { terminated: false, truncated: false },
        success: false,
        signals: { distance: -3 },
      },
    },
  ];
  it('a correct reward passes', async () => {
    assert.deepEqual(await checkRewardConformance(toyReward(), { transitions }), []);
  });
  for (const [what, bugs, expected] of [
    ['a missing term', { missingTerm: true }, 'every declared term is present and finite'],
    ['a NaN term', { nan: true }, 'every declared term is present and finite'],
    ['an undeclared term', { extraTerm: true }, 'every declared term is present and finite'],
    [
      'a reward that mutates the transition',
      { mutate: true },
      'terms are deterministic and leave the transition untouched',
    ],
  ] as const) {
    it(`catches ${what}`, async () => {
      const failures = await checkRewardConformance(toyReward(bugs), { transitions });
      assert.ok(failedChecks(failures).includes(expected), `failed: ${failedChecks(failures).join(' | ')}`);
    });
  }
});

describe('module suite', () => {
  const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
  it('a plugin whose module binds what it declares passes', async () => {
    assert.deepEqual(await checkModuleConformance(fixture('good-plugin')), []);
  });
  it('catches a manifest that declares an id the module does not bind', async () => {
    const failures = await checkModuleConformance(fixture('undeclared-plugin'));
    assert.ok(
      failures.some(
        (f) => /binds no environment contribution with that id/.test(f.message) || /does not declare/.test(f.message),
      ),
      JSON.stringify(failures),
    );
  });
  it('catches a config schema that differs from the schema file', async () => {
    const failures = await checkModuleConformance(fixture('schema-mismatch-plugin'));
    assert.ok(
      failures.some((f) => /configSchema differs/.test(f.message)),
      JSON.stringify(failures),
    );
  });
  it('catches a manifest that is not the one the code states, showing the difference', async () => {
    const failures = await checkModuleConformance(fixture('schema-mismatch-plugin'));
    const stale = failures.find((f) => f.check === 'the manifest is the one the code states (troupe manifest)');
    assert.ok(stale, JSON.stringify(failures));
    assert.match(stale.message, /- troupe\.contributes\.environments\[0\]\.configSchema: "\.\/schemas\/config\.json"/);
    assert.match(
      stale.message,
      /\+ troupe\.contributes\.environments\[0\]\.configSchema: "\.\/schemas\/fixture-env-v0\.config\.json"/,
    );
    assert.match(stale.message, /regenerate it: troupe manifest .*schema-mismatch-plugin --write/);
  });
  it('catches an invalid manifest', async () => {
    const failures = await checkModuleConformance(fixture('bad-manifest-plugin'));
    assert.ok(
      failures.some((f) => /invalid `troupe` manifest/.test(f.message)),
      JSON.stringify(failures),
    );
  });
});

describe('deepFreeze', () => {
  it('freezes nested objects and arrays', () => {
    const v = deepFreeze({ a: [{ b: 1 }], c: { d: 2 } });
    assert.ok(Object.isFrozen(v.a[0]) && Object.isFrozen(v.c) && Object.isFrozen(v.a));
    assert.equal(Reflect.set(v.c, 'd', 3), false);
    assert.equal(v.c.d, 2);
  });
});
