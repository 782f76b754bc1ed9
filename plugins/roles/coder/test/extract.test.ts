import assert from 'node:assert/strict';
import {
  extractProgram,
  fencedBlocks,
  languageOfLabel,
  parseAnswerOutput,
  parseJsonOutput,
  parseMovesOutput,
} from '@troupe/role-coder';

const ok = (text: string) => {
  const r = extractProgram(text);
  assert.ok(r.ok, `expected a program from ${JSON.stringify(text.slice(0, 80))}: ${!r.ok ? r.error : ''}`);
  return r;
};
const err = (text: string): string => {
  const r = extractProgram(text);
  assert.ok(!r.ok, `expected no program from ${JSON.stringify(text.slice(0, 80))}`);
  return r.error;
};

describe('code block extraction', () => {
  it('takes the LAST python/javascript block', () => {
    const r = ok('First try:\n```python\nprint(1)\n```\nBetter:\n```py\nprint(2)\n```\nDone.');
    assert.deepEqual([r.language, r.source], ['python', 'print(2)\n']);
    const js = ok('```python\nprint(1)\n```\n```js\nconsole.log(2)\n```');
    assert.deepEqual([js.language, js.source], ['javascript', 'console.log(2)\n']);
    assert.equal(ok('```javascript\nx\n```').language, 'javascript');
    assert.equal(ok('```Python3\nx\n```').language, 'python');
  });

  it('treats an unlabelled block as python, but prefers a labelled one (an unlabelled example output may follow)', () => {
    assert.deepEqual(ok('```\nprint(input())\n```'), { ok: true, language: 'python', source: 'print(input())\n' });
    const r = ok('```python\nprint(int(input()) * 2)\n```\nExample output:\n```\n10\n```');
    assert.equal(r.source, 'print(int(input()) * 2)\n');
  });

  it('never takes blocks labelled with another language or text', () => {
    assert.match(err('```cpp\nint main() {}\n```'), /labelled ```cpp; write the program in a ```python block/);
    assert.match(err('```text\nhello\n```\n```bash\nls\n```'), /```text, ```bash/);
  });

  it('gives clear errors for no block, an unclosed block and an empty block', () => {
    assert.match(err('print(1)'), /no fenced code block found/);
    assert.match(err('```python\nprint(1)\n'), /not closed/);
    assert.match(err('```python\n\n   \n```'), /empty/);
    assert.match(err(''), /no fenced code block/);
  });

  it('handles longer fences (a block containing ```), tildes, CRLF and indented fences', () => {
    const r = ok('````python\ns = """\n```\n"""\nprint(s)\n````');
    assert.equal(r.source, 's = """\n```\n"""\nprint(s)\n');
    assert.equal(ok('~~~python\nprint(3)\n~~~').source, 'print(3)\n');
    assert.equal(ok('```python\r\nprint(4)\r\n```\r\n').source, 'print(4)\n');
    assert.equal(ok('  ```python\n  print(5)\n  ```').source, '  print(5)\n');
    assert.equal(fencedBlocks('```a\n1\n```\n```b\n2').length, 2);
    assert.equal(languageOfLabel('node'), 'javascript');
    assert.equal(languageOfLabel('rust'), undefined);
  });

  it('rejects huge programs', () => {
    assert.match(err(`\`\`\`python\n${'x = 1\n'.repeat(30_000)}\`\`\``), /longer than/);
  });
});

describe('program output parsers', () => {
  const moves = (s: string) => parseMovesOutput(s);
  it('reads moves as [U, R, D], quoted lists, space/comma lists, words and letter runs', () => {
    assert.deepEqual(moves('[U, R, D]\n'), { ok: true, action: ['U', 'R', 'D'] });
    assert.deepEqual(moves("debug: 3 steps\n['U', 'R']\n"), { ok: true, action: ['U', 'R'] });
    assert.deepEqual(moves('U R D\n'), { ok: true, action: ['U', 'R', 'D'] });
    assert.deepEqual(moves('path found\nu,r,d,l\n'), { ok: true, action: ['U', 'R', 'D', 'L'] });
    assert.deepEqual(moves('up right down left'), { ok: true, action: ['U', 'R', 'D', 'L'] });
    assert.deepEqual(moves('URDL'), { ok: true, action: ['U', 'R', 'D', 'L'] });
    assert.deepEqual(moves('[]'), { ok: true, action: [] });
    assert.deepEqual(moves('first [L]\nfinal [R, R]'), { ok: true, action: ['R', 'R'] });
  });
  it('rejects unreadable move output with a clear error', () => {
    const r = moves('[U, X]');
    assert.ok(!r.ok && /cannot read "X" as a move/.test(r.error));
    const e = moves('');
    assert.ok(!e.ok && /printed nothing/.test(e.error));
    const n = moves('no path exists');
    assert.ok(!n.ok);
  });
  it('reads answers as the last line and JSON actions', () => {
    assert.deepEqual(parseAnswerOutput('working...\n 42 \n\n'), { ok: true, action: '42' });
    assert.ok(!parseAnswerOutput('  \n').ok);
    assert.deepEqual(parseJsonOutput('log\n{"a": [1, 2]}\n'), { ok: true, action: { a: [1, 2] } });
    assert.ok(!parseJsonOutput('nope').ok);
  });
});
