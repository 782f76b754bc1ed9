import assert from 'node:assert/strict';
import { normalizeOutput, outputsMatch, toOutcome } from '@troupe/env-code';
import type { RunResult } from '@troupe/sandbox';

describe('output comparison', () => {
  it('ignores trailing spaces, trailing blank lines and CRLF line endings', () => {
    assert.equal(normalizeOutput('1 2  \r\n3\t\n\n\n'), '1 2\n3');
    assert.ok(outputsMatch('3\n', '3'));
    assert.ok(outputsMatch('a b \nc\n\n', 'a b\nc\n'));
    assert.ok(outputsMatch('x\r\ny\r\n', 'x\ny\n'));
  });

  it('keeps leading whitespace, inner blank lines and inner spacing significant', () => {
    assert.ok(!outputsMatch(' 3\n', '3\n'));
    assert.ok(!outputsMatch('a\n\nb\n', 'a\nb\n'));
    assert.ok(!outputsMatch('1  2\n', '1 2\n'));
    assert.ok(!outputsMatch('YES\n', 'yes\n'));
    assert.ok(!outputsMatch('', '0\n'));
  });

  it('compares numbers with the float tolerance only when one is given', () => {
    assert.ok(!outputsMatch('2.3333333\n', '2.333333\n'));
    assert.ok(outputsMatch('2.3333333\n', '2.333333\n', 1e-6));
    assert.ok(outputsMatch('5\n', '5.000000\n', 1e-6));
    assert.ok(!outputsMatch('2.34\n', '2.333333\n', 1e-6));
    // relative above 1: 1e6 * 1e-6 = 1 allowed
    assert.ok(outputsMatch('1000000.9', '1000000', 1e-6));
    assert.ok(!outputsMatch('1000002', '1000000', 1e-6));
    // token counts and non-numeric tokens must still agree
    assert.ok(!outputsMatch('1.0 2.0\n', '1.0\n', 1e-6));
    assert.ok(!outputsMatch('abc 1.0\n', 'abd 1.0\n', 1e-6));
    assert.ok(!outputsMatch('nan\n', 'nan0\n', 1e-6));
    assert.ok(!outputsMatch('inf\n', '1e400\n', 1e-6));
  });

  it('judges by exit code: stderr warnings with exit code 0 are not failures; a crash is', () => {
    const run = (over: Partial<RunResult>): RunResult => ({
      verdict: 'ok',
      exitCode: 0,
      signal: null,
      stdout: '3\n',
      stderr: '',
      wallMs: 1,
      truncated: false,
      isolation: 'bwrap',
      ...over,
    });
    const test = { input: '1 2\n', output: '3\n' };
    assert.equal(toOutcome(test, run({ stderr: 'DeprecationWarning: something\n' }), null).passed, true);
    const crash = toOutcome(
      test,
      run({ verdict: 'runtime-error', exitCode: 1, stderr: 'Traceback...\nValueError: x\n' }),
      null,
    );
    assert.equal(crash.passed, false);
    assert.equal(crash.verdict, 'runtime-error');
    assert.match(crash.stderr, /ValueError/);
    assert.equal(toOutcome(test, run({ verdict: 'timeout', exitCode: null }), null).passed, false);
  });
});
