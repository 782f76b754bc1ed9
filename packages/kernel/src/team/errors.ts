import { relative, isAbsolute } from 'node:path';

/** One problem in a team spec, pointing at the YAML node at fault. */
export interface SpecIssue {
  /** The file the offending node came from (absolute, or `<embedded>`). With `extends`, this may be a base file. */
  readonly file: string;
  /** 1-based line (0 when unknown). */
  readonly line: number;
  /** 1-based column (0 when unknown). */
  readonly col: number;
  /** Key path in the resolved spec, e.g. `seats.coder.policy` (`(root)` for the whole document). */
  readonly path: string;
  /** What is wrong, e.g. `must be string`. */
  readonly message: string;
  /** What to do, e.g. `did you mean "shared"?`. */
  readonly hint?: string;
}

/** Shows a file relative to the current directory when it lies below it. */
export function displayFile(file: string, cwd: string = process.cwd()): string {
  if (!isAbsolute(file)) return file;
  const rel = relative(cwd, file);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

/** Formats an issue as `team.yaml:12:5 seats.coder.policy: must be string (did you mean "shared"?)`. */
export function formatIssue(issue: SpecIssue): string {
  const where = issue.line > 0 ? `${displayFile(issue.file)}:${issue.line}:${issue.col}` : displayFile(issue.file);
  return `${where} ${issue.path}: ${issue.message}${issue.hint ? ` (${issue.hint})` : ''}`;
}

/** A team spec that cannot be used; `issues` lists every problem found, each with file, line and column. */
export class SpecError extends Error {
  /** Every problem, in document order per file. */
  readonly issues: readonly SpecIssue[];
  /** The spec file that was being loaded. */
  readonly file: string;

  /** @param file the spec file being loaded; @param issues the problems (at least one) */
  constructor(file: string, issues: readonly SpecIssue[]) {
    const n = issues.length;
    super(
      `team spec ${displayFile(file)} has ${n} problem${n === 1 ? '' : 's'}:\n${issues.map((i) => `  ${formatIssue(i)}`).join('\n')}`,
    );
    this.name = 'SpecError';
    this.file = file;
    this.issues = issues;
  }

  /** A plain object for `--json` output. */
  toJSON(): { name: string; message: string; file: string; issues: readonly SpecIssue[] } {
    return { name: this.name, message: this.message, file: this.file, issues: this.issues };
  }
}
