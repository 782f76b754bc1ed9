import assert from 'node:assert/strict';
import type { Observation } from '@troupe/kernel';
import { findAnswerLine, quoteExcerpt, renderUserMessage } from '../src/index.js';

const observation: Observation = {
  task: '  Reach the goal.  ',
  state: 'A=(0,0) G=(1,1)\n..\n..',
  context: [
    { label: 'turn 1', text: '[R1] [D1] (0,0)->(1,0)' },
    { label: 'proposal', text: '[R1] -> (1,1) goal' },
  ],
  turn: 1,
  data: {},
};

describe('renderUserMessage', () => {
  it('lays out task, current state, one headed paragraph per context block and the answer format', () => {
    assert.equal(
      renderUserMessage(observation, { format: '#### [..]' }),
      [
        'Reach the goal.',
        'Current state:\nA=(0,0) G=(1,1)\n..\n..',
        '### turn 1\n[R1] [D1] (0,0)->(1,0)',
        '### proposal\n[R1] -> (1,1) goal',
        'Answer with one final line: #### [..]',
      ].join('\n\n'),
    );
    assert.ok(renderUserMessage(observation, { format: 'F', includeTask: false }).startsWith('Current state:\n'));
  });

  it('terse: only the state and label: text lines, nothing else', () => {
    assert.equal(
      renderUserMessage(observation, { format: 'F', terse: true }),
      'A=(0,0) G=(1,1)\n..\n..\nturn 1: [R1] [D1] (0,0)->(1,0)\nproposal: [R1] -> (1,1) goal',
    );
    assert.equal(
      renderUserMessage(observation, { format: 'F', terse: true, stateLast: true }),
      'turn 1: [R1] [D1] (0,0)->(1,0)\nproposal: [R1] -> (1,1) goal\nA=(0,0) G=(1,1)\n..\n..',
    );
  });
});

describe('findAnswerLine', () => {
  it('takes the last #### line, trimmed, after any reasoning', () => {
    assert.deepEqual(findAnswerLine('thinking\n#### [U]\nno, wait\n  #### [D]  \n', 'F'), {
      ok: true,
      line: '#### [D]',
    });
  });

  it('names the expected format and what it found instead, quoting at most 40 characters', () => {
    assert.deepEqual(findAnswerLine('  \n', '#### [..]'), {
      ok: false,
      error: 'expected "#### [..]", found an empty answer',
    });
    const long = `${'x'.repeat(50)}\n`;
    assert.deepEqual(findAnswerLine(`a\n${long}`, 'F'), {
      ok: false,
      error: `expected "F", found no "####" line (last line "${'x'.repeat(40)}…")`,
    });
    assert.equal(quoteExcerpt('say "hi"'), '"say \\"hi\\""');
  });
});
