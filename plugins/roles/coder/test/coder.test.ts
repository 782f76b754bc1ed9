import assert from 'node:assert/strict';
import { CoderProposerRoleContribution, CoderRoleContribution, type CoderRole } from '@troupe/role-coder';
import { fileURLToPath } from 'node:url';
import { GARBAGE_TEXTS, moduleConformance, roleConformance } from '@troupe/testing';
import type { Observation, SeatContext } from '@troupe/kernel';
import { testPool } from './helpers.js';

const program: SeatContext = { seat: 'coder', actionType: 'program' };
const proposer: SeatContext = { seat: 'proposer', actionType: 'moves' };
const answerer: SeatContext = { seat: 'coder', actionType: 'answer' };
const obs: Observation = {
  task: 'Print the sum of two integers read from standard input.',
  state: 'Turn 2 of 3.\nProgram: written by the coder in turn 1 (python).',
  context: [
    {
      label: 'Failing unit tests',
      text: 'Test 1 failed.\nInput:\n```\n1 2\n```\nExpected output:\n```\n3\n```\nGot:\n```\n4\n```',
    },
  ],
  turn: 1,
};

describe('coder-v0 role', () => {
  const contribution = new CoderRoleContribution(testPool());
  const role = contribution.create({}) as CoderRole;

  it('prompts with the task, the current state and the context (failing tests), asking for a ```python block', () => {
    const [system, user] = role.prompt(obs, program);
    assert.equal(system!.role, 'system');
    assert.match(system!.content, /reads the input from standard input/);
    assert.match(system!.content, /```python/);
    for (const part of [obs.task, obs.state, obs.context[0]!.text, '## Failing unit tests'])
      assert.ok(user!.content.includes(part), part);
    assert.deepEqual(role.prompt(obs, program), role.prompt(obs, program));
    const js = contribution.create({ language: 'javascript' }).prompt(obs, program);
    assert.match(js[0]!.content, /JavaScript \(Node\.js\)[\s\S]*```javascript/);
  });

  it('parses the last code block into a program action (no sandbox run in program mode)', async () => {
    const move = await role.parse(
      'Let me think.\n```python\nprint(0)\n```\nFixed:\n```python\na, b = map(int, input().split())\nprint(a + b)\n```',
      program,
    );
    assert.deepEqual(move, {
      kind: 'action',
      action: { language: 'python', source: 'a, b = map(int, input().split())\nprint(a + b)\n' },
      text: move.text,
    });
    const bad = await role.parse('I would write a loop.', program);
    assert.equal(bad.kind, 'invalid');
    assert.match((bad as { error: string }).error, /no fenced code block found/);
  });

  it('renders a program in ```python fences', () => {
    assert.equal(role.render({ language: 'python', source: 'print(1)\n' }, program), '```python\nprint(1)\n```');
    assert.equal(
      role.render({ language: 'javascript', source: 'console.log(1)' }, program),
      '```javascript\nconsole.log(1)\n```',
    );
  });

  it('hostile or garbage text is always an invalid move, never a throw', async () => {
    const hostile = [
      ...GARBAGE_TEXTS,
      '```python\n```',
      '```rust\nfn main() {}\n```',
      '``` python',
      '`'.repeat(10_000),
      '```python\nprint(1)',
      'Sure! Here is the program:\n\nprint(1)\n',
      '\u0000```python\u0000\n```',
    ];
    for (const text of hostile) {
      for (const seat of [program, proposer]) {
        const move = await role.parse(text, seat);
        assert.equal(move.kind, 'invalid', `${seat.actionType}: ${JSON.stringify(text.slice(0, 40))}`);
        assert.ok((move as { error: string }).error.length > 0);
      }
    }
  });

  describe('program-output-actions mode (auto for non-program seats)', () => {
    it('runs the program and parses its printed moves; details carry program, stdout and verdict', async () => {
      const text =
        '```python\npath = []\nfor step in "RRD":\n    path.append(step)\nprint("searching...")\nprint("[" + ", ".join(path) + "]")\n```';
      const move = await role.parse(text, proposer);
      assert.equal(move.kind, 'action');
      assert.deepEqual((move as { action: unknown }).action, ['R', 'R', 'D']);
      assert.equal(move.details!['verdict'], 'ok');
      assert.equal(move.details!['stdout'], 'searching...\n[R, R, D]\n');
      assert.match(String(move.details!['program']), /for step in "RRD"/);
      assert.equal(move.details!['language'], 'python');
    });

    it('a crashing program or unreadable output is invalid, with the details for the next seat', async () => {
      const crash = await role.parse(
        '```python\nimport sys\nprint("partial")\nraise RuntimeError("no path")\n```',
        proposer,
      );
      assert.equal(crash.kind, 'invalid');
      assert.match((crash as { error: string }).error, /crashed \(exit code 1\).*RuntimeError: no path/s);
      assert.equal(crash.details!['verdict'], 'runtime-error');
      assert.equal(crash.details!['stdout'], 'partial\n');
      const garbled = await role.parse('```python\nprint("go north")\n```', proposer);
      assert.equal(garbled.kind, 'invalid');
      assert.match((garbled as { error: string }).error, /cannot read "go" as a move/);
      assert.equal(garbled.details!['stdout'], 'go north\n');
    });

    it('a program that floods stdout is stopped by the sandbox: invalid, output-limit', async () => {
      const move = await role.parse('```python\nwhile True:\n    print("U")\n```', proposer);
      assert.equal(move.kind, 'invalid');
      assert.match((move as { error: string }).error, /printed too much/);
      assert.equal(move.details!['verdict'], 'output-limit');
      assert.ok(String(move.details!['stdout']).length <= 2100, 'details keep a trimmed stdout');
    });

    it('stderr warnings with exit code 0 do not make the run fail', async () => {
      const move = await role.parse(
        '```python\nimport sys\nprint("warning: slow", file=sys.stderr)\nprint("U U")\n```',
        proposer,
      );
      assert.deepEqual((move as { action: unknown }).action, ['U', 'U']);
      assert.equal(move.details!['stderr'], 'warning: slow\n');
    });

    it('answers: the last printed line; render prints the action back', async () => {
      const move = await role.parse('```python\nprint("x =", 6 * 7)\nprint(6 * 7)\n```', answerer);
      assert.deepEqual((move as { action: unknown }).action, '42');
      const back = await role.parse(role.render('3/4', answerer), answerer);
      assert.equal((back as { action: unknown }).action, '3/4');
      const moves = await role.parse(role.render(['L', 'D'], proposer), proposer);
      assert.deepEqual((moves as { action: unknown }).action, ['L', 'D']);
    });

    it('mode: program forces the program action even on other seats; coder-proposer-v0 always runs it', async () => {
      const forced = new CoderRoleContribution(testPool()).create({ mode: 'program' });
      const m = await forced.parse('```python\nprint("[U]")\n```', proposer);
      assert.deepEqual((m as { action: unknown }).action, { language: 'python', source: 'print("[U]")\n' });
      const prop = new CoderProposerRoleContribution(testPool());
      assert.deepEqual(prop.produces, ['moves', 'answer', '*']);
      const p = prop.create({});
      assert.equal(p.id, 'coder-proposer-v0');
      assert.match(
        p.prompt(obs, proposer)[0]!.content,
        /Print the list of moves on the last line, for example \[U, R, D\]/,
      );
      const pm = await p.parse('```python\nprint("[U]")\n```', proposer);
      assert.deepEqual((pm as { action: unknown }).action, ['U']);
    });

    it("renders the environment's oracle program when the render context has one (configured language, then python)", async () => {
      const search = 'print(*"UR")';
      const asked: string[] = [];
      const context = {
        oracleProgram: (language: 'python' | 'javascript') => (
          asked.push(language),
          language === 'python' ? search : undefined
        ),
      };
      const text = role.render(['U', 'R'], proposer, context);
      assert.equal(text, '```python\nprint(*"UR")\n```');
      assert.deepEqual(asked, ['python']);
      assert.deepEqual(((await role.parse(text, proposer)) as { action: unknown }).action, ['U', 'R']);
      asked.length = 0;
      const js = new CoderRoleContribution(testPool()).create({ language: 'javascript' });
      assert.equal(js.render(['U', 'R'], proposer, context), text, 'no javascript program: falls back to python');
      assert.deepEqual(asked, ['javascript', 'python']);
      const none = role.render(['U', 'R'], proposer, { oracleProgram: () => undefined });
      assert.equal(none, role.render(['U', 'R'], proposer), 'no program at all: a program that prints the action');
      assert.deepEqual(((await role.parse(none, proposer)) as { action: unknown }).action, ['U', 'R']);
      assert.equal(
        role.render({ language: 'python', source: 'print(1)\n' }, program, context),
        '```python\nprint(1)\n```',
        'program seats render their own program',
      );
    });

    it('terse: the state and the context blocks only; systemPrompt replaces the system message', () => {
      const terse = new CoderRoleContribution(testPool()).create({ terse: true, systemPrompt: 'you are the {seat}' });
      const [system, user] = terse.prompt(obs, proposer);
      assert.equal(system!.content, 'you are the proposer');
      assert.ok(user!.content.endsWith(`\n${obs.state}`), `the state last: ${user!.content}`);
      assert.ok(user!.content.startsWith(`${obs.context[0]!.label}: ${obs.context[0]!.text}`));
      assert.ok(!user!.content.includes(obs.task), 'no task text');
      assert.ok(!user!.content.includes('```python block'), 'no closing line');
      assert.throws(() => new CoderRoleContribution(testPool()).create({ terse: 'yes' }), /terse/);
      assert.throws(() => new CoderRoleContribution(testPool()).create({ systemPrompt: 3 }), /systemPrompt/);
    });

    it('an aborted seat signal stops the run', async () => {
      const ctl = new AbortController();
      ctl.abort(new Error('episode cancelled'));
      await assert.rejects(
        async () => role.parse('```python\nprint("[U]")\n```', { ...proposer, signal: ctl.signal }),
        /episode cancelled/,
      );
    });
  });
});

roleConformance(new CoderRoleContribution(testPool()), {
  observations: [obs, { task: 'Solve it.', state: 'Turn 1 of 3.\nProgram: none yet.', context: [], turn: 0 }],
  actions: [
    { language: 'python', source: 'a, b = map(int, input().split())\nprint(a + b)\n' },
    { language: 'javascript', source: 'console.log(1)\n' },
  ],
  seats: [program],
  actionSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['language', 'source'],
    properties: { language: { enum: ['python', 'javascript'] }, source: { type: 'string', minLength: 1 } },
  },
});

roleConformance(new CoderProposerRoleContribution(testPool()), {
  observations: [obs],
  actions: [['U', 'R', 'D'], ['L'], []],
  seats: [proposer],
  actionSchema: { type: 'array', items: { enum: ['U', 'D', 'L', 'R'] } },
});

moduleConformance(fileURLToPath(new URL('..', import.meta.url)));
