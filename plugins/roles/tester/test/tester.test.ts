import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import type { Observation, SeatContext } from '@troupe/kernel';
import { GARBAGE_TEXTS, moduleConformance, roleConformance } from '@troupe/testing';
import {
  TesterRoleContribution,
  headerKind,
  parseUnitTests,
  renderUnitTests,
  type UnitTest,
} from '@troupe/role-tester';

const seat: SeatContext = { seat: 'tester', actionType: 'unit-tests' };
const obs: Observation = {
  task: 'You are the tester of a team. Problem: print the sum of two integers.',
  state: 'Turn 1 of 3.\nProgram: written by the coder in turn 1 (python).\nUnit tests: none yet.',
  context: [
    { label: 'Current program (coder, turn 1)', text: '```python\nprint(sum(map(int, input().split())))\n```' },
  ],
  turn: 0,
};
const role = new TesterRoleContribution().create({});
const tests = (text: string): UnitTest[] => {
  const r = parseUnitTests(text);
  assert.ok(r.ok, `expected tests from ${JSON.stringify(text.slice(0, 80))}: ${!r.ok ? r.error : ''}`);
  return r.tests;
};

describe('tester-v0 role', () => {
  it('parses the documented format: one or more **Test Input:** / **Test Output:** block pairs', () => {
    const text =
      'Here are my tests.\n\n**Test Input:**\n```\n1 2\n```\n**Test Output:**\n```\n3\n```\n\n**Test Input:**\n```\n-5 5\n```\n**Test Output:**\n```\n0\n```\n';
    assert.deepEqual(tests(text), [
      { input: '1 2\n', output: '3\n' },
      { input: '-5 5\n', output: '0\n' },
    ]);
  });

  it('is lenient about headers, labels, fence length, multi-line blocks, CRLF and chatter', () => {
    const variants = [
      '### Test Case 1 Input:\n```text\n3\n1 2 3\n```\nSome explanation.\n### Expected Output:\n```\n6\n```',
      'Input:\n~~~\n3\n1 2 3\n~~~\nOutput\n````\n6\n````',
      '**Test Input 1:**\r\n```\r\n3\r\n1 2 3\r\n```\r\n**Test Output 1:**\r\n```\r\n6\r\n```',
      '1. Input:\n```\n3\n1 2 3\n```\n1. Output:\n```\n6\n```',
      '*Test input*\n```plaintext\n3\n1 2 3\n```\n*Test output*\n```\n6\n```',
    ];
    for (const v of variants) assert.deepEqual(tests(v), [{ input: '3\n1 2 3\n', output: '6\n' }], v);
    assert.equal(headerKind('**Test Input:**'), 'input');
    assert.equal(headerKind('Expected Output'), 'output');
    assert.equal(headerKind('Here is the input I will use for the first test:'), undefined);
  });

  it('accepts one-line values after the header colon', () => {
    assert.deepEqual(tests('**Test Input:** 1 2\n**Test Output:** 3\n\nInput: `5 5`\nExpected Output: 10'), [
      { input: '1 2\n', output: '3\n' },
      { input: '5 5\n', output: '10\n' },
    ]);
    assert.deepEqual(tests('**Test Input:** 2 * 3\n**Test Output:**\n```\n6\n```'), [
      { input: '2 * 3\n', output: '6\n' },
    ]);
  });

  it('drops inputs without an output, and blocks without a header', () => {
    const r = parseUnitTests(
      '```\nnot a test\n```\n**Test Input:**\n```\n1\n```\n**Test Input:**\n```\n2\n```\n**Test Output:**\n```\n4\n```\n**Test Input:**\n```\n9\n```',
    );
    assert.ok(r.ok);
    assert.deepEqual(r.tests, [{ input: '2\n', output: '4\n' }]);
    assert.equal(r.dropped, 2);
  });

  it('caps the number of tests (maxTests) and reports the dropped ones in details', async () => {
    const many = Array.from(
      { length: 5 },
      (_, i) => `**Test Input:**\n\`\`\`\n${i}\n\`\`\`\n**Test Output:**\n\`\`\`\n${i}\n\`\`\``,
    ).join('\n');
    const capped = new TesterRoleContribution().create({ maxTests: 3 });
    const move = await capped.parse(many, seat);
    assert.equal(move.kind, 'action');
    assert.equal(move.kind === 'action' ? move.action.tests.length : -1, 3);
    assert.deepEqual(move.details, { droppedTests: 2 });
  });

  it('gives invalid moves with a clear error for empty, header-only, unclosed and hostile replies', async () => {
    const cases: [string, RegExp][] = [
      ['', /the reply is empty; write each test as a line \*\*Test Input:\*\* followed by a fenced ``` block/],
      ['**Test Input:**\n**Test Output:**\n```\n3\n```', /no test has both an input block and an output block/],
      ['**Test Input:**\n```\n1 2\n```\n**Test Output:**\n```\n3\n', /a code block is not closed/],
      ['The answer is 42.', /no test found/],
      ['**Test Output:**\n```\n3\n```\n**Test Input:**\n```\n1 2\n```', /no test has both/],
    ];
    for (const [text, error] of cases) {
      const move = await role.parse(text, seat);
      assert.equal(move.kind, 'invalid', text);
      assert.match((move as { error: string }).error, error);
    }
    for (const text of [
      ...GARBAGE_TEXTS,
      '```\n'.repeat(5000),
      '**Test Input:**\n'.repeat(5000),
      `**Test Input:**\n\`\`\`\n${'x'.repeat(30_000)}\n\`\`\`\n**Test Output:**\n\`\`\`\n1\n\`\`\``,
    ]) {
      const move = await role.parse(text, seat);
      assert.equal(move.kind, 'invalid', JSON.stringify(text.slice(0, 40)));
    }
  });

  it('renders the exact format, and the grammar accepts it', () => {
    const t = [
      { input: '1 2\n', output: '3\n' },
      { input: '\n', output: '0\n' },
    ];
    const text = renderUnitTests(t);
    assert.equal(
      text,
      '**Test Input:**\n```\n1 2\n```\n**Test Output:**\n```\n3\n```\n\n**Test Input:**\n```\n\n```\n**Test Output:**\n```\n0\n```',
    );
    assert.deepEqual(tests(text), t);
    const g = role.grammar!(seat)!;
    assert.ok(g.kind === 'regex' && new RegExp(`^(?:${g.pattern})$`).test(text));
  });

  it("prompts with the format, the task, the state and the coder's program", () => {
    const [system, user] = role.prompt(obs, seat);
    assert.match(
      system!.content,
      /\*\*Test Input:\*\*\n```\n<input>\n```\n\*\*Test Output:\*\*\n```\n<expected output>\n```/,
    );
    for (const part of [obs.task, obs.state, obs.context[0]!.text]) assert.ok(user!.content.includes(part));
  });
});

roleConformance(new TesterRoleContribution(), {
  observations: [obs],
  actions: [
    { tests: [{ input: '1 2\n', output: '3\n' }] },
    {
      tests: [
        { input: '3\n1 2 3\n', output: '6\n' },
        { input: '0\n\n', output: '0\n' },
      ].slice(0, 1),
    },
  ],
  seats: [seat],
  actionSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['tests'],
    properties: {
      tests: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['input', 'output'],
          properties: { input: { type: 'string' }, output: { type: 'string' } },
        },
      },
    },
  },
});

moduleConformance(fileURLToPath(new URL('..', import.meta.url)));
