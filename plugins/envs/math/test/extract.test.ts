import assert from 'node:assert/strict';
import {
  extractLastBoxed,
  extractProgramAnswer,
  lastPrintedLine,
  normalizeAnswer,
  parseRational,
  latexToMathjs,
  LatexTranslationError,
} from '../src/checker/index.js';

describe('checker: extraction', () => {
  it('takes the LAST \\boxed{} with balanced braces', () => {
    assert.equal(extractLastBoxed('a \\boxed{1} b \\boxed{2}'), '2');
    assert.equal(extractLastBoxed('\\boxed{\\frac{1}{2}}'), '\\frac{1}{2}');
    assert.equal(extractLastBoxed('\\boxed{ {a}{b} }'), '{a}{b}');
    assert.equal(extractLastBoxed('\\boxed{\\{1, 2\\}}'), '\\{1, 2\\}');
  });
  it('accepts \\boxed x and \\fbox{}', () => {
    assert.equal(extractLastBoxed('so $\\boxed 5$'), '5');
    assert.equal(extractLastBoxed('the answer is \\boxed 12.'), '12');
    assert.equal(extractLastBoxed('\\fbox{7}'), '7');
    assert.equal(extractLastBoxed('\\boxed{1} and \\fbox{3}'), '3');
  });
  it('skips a trailing malformed box and returns undefined when there is none', () => {
    assert.equal(extractLastBoxed('\\boxed{1} then \\boxed{2'), '1');
    assert.equal(extractLastBoxed('no box here'), undefined);
    assert.equal(extractLastBoxed('\\boxedx{3}'), undefined);
    assert.equal(extractLastBoxed('\\boxed{'), undefined);
  });
  it('reads the last printed line of program output', () => {
    assert.equal(lastPrintedLine('debug\n42\n\n  \n'), '42');
    assert.equal(lastPrintedLine('a\r\nb\r\n'), 'b');
    assert.equal(lastPrintedLine('   \n'), undefined);
    assert.equal(extractProgramAnswer('working...\nAnswer: \\boxed{7}\n'), '7');
    assert.equal(extractProgramAnswer('3/4\n'), '3/4');
    assert.equal(extractProgramAnswer(''), undefined);
  });
});

describe('checker: normalisation and parsing', () => {
  it('normalises typesetting away', () => {
    assert.equal(normalizeAnswer('$\\left( 1, 2 \\right]$'), '(1,2]');
    assert.equal(normalizeAnswer('\\dfrac{1}{2}'), '\\frac{1}{2}');
    assert.equal(normalizeAnswer('\\frac12'), '\\frac{1}{2}');
    assert.equal(normalizeAnswer('\\sqrt2'), '\\sqrt{2}');
    assert.equal(normalizeAnswer('10\\text{ cm}.'), '10');
    assert.equal(normalizeAnswer('x = \\frac{3}{4}'), '\\frac{3}{4}');
    assert.equal(normalizeAnswer('1,234,567'), '1234567');
    assert.equal(normalizeAnswer('90^\\circ'), '90');
    assert.equal(normalizeAnswer('\\$12.50'), '12.50');
    assert.equal(normalizeAnswer('2x'), '2x');
    assert.equal(normalizeAnswer('5m'), '5m');
    assert.equal(normalizeAnswer('\\cdot e'), '\\cdot e');
    assert.equal(normalizeAnswer(normalizeAnswer('$1{,}000$ dollars')), normalizeAnswer('$1{,}000$ dollars'));
  });
  it('parses exact rationals', () => {
    assert.equal(parseRational('0.125')?.value.toString(), '1/8');
    assert.equal(parseRational('-\\frac{6}{4}')?.value.toString(), '-3/2');
    assert.equal(parseRational('3\\frac{1}{3}')?.value.toString(), '10/3');
    assert.equal(parseRational('1.2e-3')?.value.toString(), '3/2500');
    assert.equal(parseRational('40%')?.percent, true);
    assert.equal(parseRational('1/0'), undefined);
    assert.equal(parseRational('\\sqrt{2}'), undefined);
    assert.equal(parseRational('123456789012345678901234567890')?.value.toString(), '123456789012345678901234567890');
  });
  it('translates LaTeX to mathjs syntax with explicit implicit products', () => {
    assert.equal(latexToMathjs('2\\sqrt{2}x'), '2 * sqrt(2) * x');
    assert.equal(latexToMathjs('\\frac{a}{b}'), '((a) / (b))');
    assert.equal(latexToMathjs('\\sqrt[3]{x}'), 'nthRoot(x, 3)');
    assert.equal(latexToMathjs('x_{1}y'), 'x_1 * y');
    assert.equal(latexToMathjs('|x|'), 'abs( x )');
    assert.throws(() => latexToMathjs('\\foo{1}'), LatexTranslationError);
  });
});
