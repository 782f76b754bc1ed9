/**
 * The convention for a tool-using role's move details (the coder runs its program in the sandbox): environments
 * show them to the next seat ("the program and its output") without knowing which role produced them.
 */

/** Details a tool-using role attaches to its move. */
export interface ToolDetails {
  /** The program source. */
  readonly program: string;
  /** Its language. */
  readonly language?: string;
  /** What it printed (possibly trimmed). */
  readonly stdout?: string;
  /** What it printed on stderr (possibly trimmed). */
  readonly stderr?: string;
  /** The sandbox verdict (`ok`, `timeout`, ...). */
  readonly verdict?: string;
}

/** The tool details of a move, when its role attached some. */
export function toolDetailsOf(details: Readonly<Record<string, unknown>> | undefined): ToolDetails | undefined {
  if (!details || typeof details.program !== 'string') return undefined;
  const str = (k: string): string | undefined => (typeof details[k] === 'string' ? (details[k] as string) : undefined);
  const out: { -readonly [K in keyof ToolDetails]: ToolDetails[K] } = { program: details.program };
  for (const k of ['language', 'stdout', 'stderr', 'verdict'] as const) {
    const v = str(k);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** Renders tool details for another seat's observation: the program, then its output and verdict. */
export function toolDetailsText(tool: ToolDetails): string {
  const lines = [
    `Program (${tool.language ?? 'python'}):`,
    '```' + (tool.language ?? 'python'),
    tool.program.trimEnd(),
    '```',
  ];
  if (tool.verdict !== undefined) lines.push(`Run verdict: ${tool.verdict}`);
  lines.push('Output:', '```', (tool.stdout ?? '').trimEnd(), '```');
  if (tool.stderr && tool.stderr.trim()) lines.push('Errors:', '```', tool.stderr.trimEnd(), '```');
  return lines.join('\n');
}
