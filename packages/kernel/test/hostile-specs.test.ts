/**
 * Team specs written by an attacker: alias bombs, nesting, prototype keys, huge or endless files named by `extends`,
 * and numbers out of any sane range. Every one must be refused with a located SpecError (file, line, key path),
 * quickly and without an internal error.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PolicyContribution } from '../src/contracts/index.js';
import { PluginHost } from '../src/plugins/index.js';
import {
  loadTeamSpec,
  MAX_EXTENDS_FILES,
  parseTeamSpec,
  SpecError,
  TEAM_SCHEMA,
  YAML_LIMITS,
  type SpecIssue,
} from '../src/team/index.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const BASE = `name: hostile
environment: { id: plan-path }
seats:
  planner:
    role: planner
    policy: p
    sampling: { temperature: 1, topP: 1, topK: 0, maxTokens: 8 }
policies: { p: { kind: oracle } }
rewards: { id: signals }
`;
/** Lines of BASE, so that a case's own lines are numbered from BASE_LINES + 1. */
const BASE_LINES = BASE.split('\n').length - 1;

/** The issues of a spec that must be refused. */
function refused(fn: () => unknown): readonly SpecIssue[] {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof SpecError, `expected a SpecError, got ${(error as Error).stack}`);
    return error.issues;
  }
  assert.fail('the spec was accepted');
}

function billionLaughs(levels: number): string {
  let out = 'seatDefaults:\n  roleConfig:\n    l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n';
  for (let i = 1; i < levels; i++)
    out += `    l${i}: &l${i} [${Array(9)
      .fill(`*l${i - 1}`)
      .join(', ')}]\n`;
  return out;
}

/** BASE with a `rewards` block of one seat entry (on line BASE_LINES + 3). */
const withRewards = (entry: string): string =>
  `${BASE.replace('rewards: { id: signals }\n', '')}rewards:\n  id: signals\n  seats:\n    ${entry}\n`;

interface TextCase {
  readonly name: string;
  /** YAML appended to BASE (or the whole text with `whole`). */
  readonly yaml: string;
  readonly whole?: boolean;
  /** Expected line (absolute), or undefined when the problem has no position (the whole text). */
  readonly line: number | undefined;
  readonly path: string;
  readonly message: RegExp;
}

/** Specs given as text: every one refused at the stated line and key path. */
const TEXT_CASES: readonly TextCase[] = [
  {
    name: 'billion laughs (9 levels of 9 aliases)',
    yaml: billionLaughs(9),
    line: BASE_LINES + 5,
    path: '(root)',
    message: /aliases expand too much/,
  },
  {
    name: 'a few aliases of one large anchor',
    yaml: `seatDefaults:\n  roleConfig:\n    big: &big [${Array(6000).fill('1').join(',')}]\n    a: *big\n    b: *big\n`,
    line: BASE_LINES + 5,
    path: 'seatDefaults.roleConfig.b[3998]',
    message: /aliases expand to more than 10000 values/,
  },
  {
    name: 'flow nesting 20 000 deep',
    yaml: `x: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`,
    line: BASE_LINES + 1,
    path: '(root)',
    message: /nesting is deeper than 64 levels/,
  },
  {
    name: 'flow maps nested 5 000 deep',
    yaml: `x: ${'{a: '.repeat(5000)}1${'}'.repeat(5000)}\n`,
    line: BASE_LINES + 1,
    path: '(root)',
    message: /nesting is deeper than 64 levels/,
  },
  {
    name: 'block maps nested 100 deep',
    yaml: `deep:\n${Array.from({ length: 99 }, (_, i) => `${' '.repeat(i + 1)}k:\n`).join('')}`,
    line: BASE_LINES + 65,
    path: '(root)',
    message: /nesting is deeper than 64 levels/,
  },
  // 20 000 of these used to crash the process (the YAML composer ran out of memory compiling a regular expression).
  {
    name: 'compact block lists 400 000 deep (- - - ...)',
    yaml: `x:\n${'- '.repeat(400_000)}a\n`,
    line: BASE_LINES + 2,
    path: '(root)',
    message: /nesting is deeper than 64 levels/,
  },
  {
    name: 'explicit keys 400 000 deep (? ? ? ...)',
    yaml: `x:\n${'? '.repeat(400_000)}a\n`,
    line: BASE_LINES + 2,
    path: '(root)',
    message: /nesting is deeper than 64 levels/,
  },
  {
    name: 'lists under keys at one indentation, 90 levels',
    yaml: `deep:\n${Array.from({ length: 30 }, (_, i) => `${'    '.repeat(i + 1)}k:\n${'    '.repeat(i + 1)}- a\n${'    '.repeat(i + 1)}- b:\n`).join('')}`,
    line: BASE_LINES + 66,
    path: 'deep.k[1].b…',
    message: /nesting is deeper than 64 levels/,
  },
  {
    name: '__proto__ inside a section',
    yaml: 'evaluation:\n  __proto__:\n    episodes: 3\n',
    line: BASE_LINES + 2,
    path: 'evaluation.__proto__',
    message: /the key __proto__ is not allowed/,
  },
  {
    name: '__proto__ at the root',
    yaml: '__proto__: { polluted: true }\n',
    line: BASE_LINES + 1,
    path: '__proto__',
    message: /the key __proto__ is not allowed/,
  },
  {
    name: '__proto__ in a plugin config',
    yaml: 'seatDefaults:\n  roleConfig:\n    "__proto__": { isAdmin: true }\n',
    line: BASE_LINES + 3,
    path: 'seatDefaults.roleConfig.__proto__',
    message: /not allowed/,
  },
  {
    name: 'a list of 400 000 values (under 1 MB)',
    yaml: `seatDefaults: { roleConfig: { x: [${Array(400_000).fill('1').join(',')}] } }\n`,
    line: BASE_LINES + 1,
    path: '(root)',
    message: /holds more than 20000 values/,
  },
  {
    name: 'a spec over 1 MB',
    yaml: `# ${'x'.repeat(YAML_LIMITS.maxBytes)}\n`,
    line: undefined,
    path: '(root)',
    message: /over the limit of 1 MB/,
  },
  // Numbers: YAML reads 1e400 and .inf as Infinity, .nan as NaN; huge finite values are out of range.
  {
    name: 'seed: 1e400',
    yaml: 'seed: 1e400\n',
    line: BASE_LINES + 1,
    path: 'seed',
    message: /allowed: a finite number, from 0 to 4294967295; got Infinity/,
  },
  {
    name: 'seed: -.inf',
    yaml: 'seed: -.inf\n',
    line: BASE_LINES + 1,
    path: 'seed',
    message: /from 0 to 4294967295; got -Infinity/,
  },
  {
    name: 'seed: 2^53',
    yaml: 'seed: 9007199254740992\n',
    line: BASE_LINES + 1,
    path: 'seed',
    message: /must be <= 4294967295/,
  },
  {
    name: 'maxTokens: .inf',
    yaml: 'seatDefaults:\n  sampling: { maxTokens: .inf }\n',
    line: BASE_LINES + 2,
    path: 'seatDefaults.sampling.maxTokens',
    message: /from 1 to 1048576; got Infinity/,
  },
  {
    name: 'temperature: .nan',
    yaml: 'seatDefaults:\n  sampling: { temperature: .nan }\n',
    line: BASE_LINES + 2,
    path: 'seatDefaults.sampling.temperature',
    message: /a finite number, from 0 to 100; got NaN/,
  },
  {
    name: 'episodes: 1e308',
    yaml: 'evaluation: { episodes: 1e308 }\n',
    line: BASE_LINES + 1,
    path: 'evaluation.episodes',
    message: /from 1 to 1000000; got 1e\+308/,
  },
  {
    name: 'steps: 1e12',
    yaml: 'algorithm: { steps: 1000000000000 }\n',
    line: BASE_LINES + 1,
    path: 'algorithm.steps',
    message: /from 0 to 10000000/,
  },
  {
    name: 'branches: 1e9',
    yaml: 'algorithm: { branches: 1000000000 }\n',
    line: BASE_LINES + 1,
    path: 'algorithm.branches',
    message: /from 1 to 1024/,
  },
  {
    name: 'reward alpha: 1e300',
    yaml: withRewards('planner: { alpha: 1e300 }'),
    whole: true,
    line: BASE_LINES + 3,
    path: 'rewards.seats.planner.alpha',
    message: /from -1000000 to 1000000/,
  },
  {
    name: 'reward weight: -.inf',
    yaml: withRewards('planner: { weights: { x: -.inf } }'),
    whole: true,
    line: BASE_LINES + 3,
    path: 'rewards.seats.planner.weights.x',
    message: /got -Infinity/,
  },
];

describe('hostile team specs', function () {
  this.timeout(20_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-hostile-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(`refuses ${TEXT_CASES.length} hostile spec texts, each at its line and key path`, () => {
    const failures: string[] = [];
    for (const c of TEXT_CASES) {
      const text = c.whole ? c.yaml : BASE + c.yaml;
      let issues: readonly SpecIssue[];
      try {
        issues = refused(() => parseTeamSpec(text, join(dir, 'team.yaml')));
      } catch (error) {
        failures.push(`${c.name}: ${(error as Error).message.split('\n')[0]}`);
        continue;
      }
      const hit = issues.find((i) => c.message.test(i.message));
      if (!hit)
        failures.push(
          `${c.name}: no issue matching ${c.message}, got ${issues.map((i) => `${i.path}: ${i.message}`).join(' | ')}`,
        );
      else if (hit.path !== c.path || hit.line !== (c.line ?? 0) || hit.file !== join(dir, 'team.yaml')) {
        failures.push(`${c.name}: at ${hit.file}:${hit.line} ${hit.path}, expected line ${c.line ?? 0} ${c.path}`);
      }
    }
    assert.deepEqual(failures, []);
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype was polluted');
    assert.equal(({} as Record<string, unknown>).isAdmin, undefined, 'Object.prototype was polluted');
  });

  it('a key named __proto__ never becomes a prototype in the resolved spec', () => {
    // Quoted or not, the key is refused; a value named __proto__ stays an ordinary string.
    const spec = parseTeamSpec(`${BASE}seatDefaults:\n  roleConfig: { note: __proto__ }\n`);
    assert.equal((spec.seats.planner!.roleConfig as Record<string, unknown>).note, '__proto__');
  });

  it('keeps legitimate anchors and aliases working', () => {
    const spec = parseTeamSpec(
      `${BASE}seatDefaults:\n  roleConfig:\n    common: &c { a: 1, b: [1, 2] }\n    again: *c\n`,
    );
    assert.deepEqual((spec.seats.planner!.roleConfig as Record<string, unknown>).again, { a: 1, b: [1, 2] });
  });

  describe('files: extends names regular files only, of at most 1 MB', () => {
    const fileCases: { name: string; target: () => string; message: RegExp }[] = [
      { name: '/dev/zero', target: () => '/dev/zero', message: /\/dev\/zero is a device, not a regular file/ },
      { name: '/dev/urandom', target: () => '/dev/urandom', message: /is a device, not a regular file/ },
      {
        name: 'a FIFO (opening it must not hang)',
        target: () => {
          const f = join(dir, 'pipe.yaml');
          execFileSync('mkfifo', [f]);
          return f;
        },
        message: /pipe\.yaml is a FIFO, not a regular file/,
      },
      {
        name: 'a folder',
        target: () => {
          const f = join(dir, 'folder.yaml');
          mkdirSync(f);
          return f;
        },
        message: /folder\.yaml is a folder, not a regular file/,
      },
      {
        name: 'a 2 MB file',
        target: () => {
          const f = join(dir, 'big.yaml');
          writeFileSync(f, `# ${'y'.repeat(2 << 20)}\n`);
          return f;
        },
        message: /big\.yaml is \d+ bytes, over the limit of 1 MB/,
      },
    ];
    for (const c of fileCases) {
      it(`refuses extends: ${c.name}, at the extends line`, () => {
        const file = join(dir, `spec-${fileCases.indexOf(c)}.yaml`);
        writeFileSync(file, `extends: ${c.target()}\n${BASE}`);
        const issues = refused(() => loadTeamSpec(file));
        assert.equal(issues.length, 1, issues.map((i) => i.message).join('\n'));
        assert.equal(issues[0]!.file, file);
        assert.equal(issues[0]!.line, 1);
        assert.equal(issues[0]!.path, 'extends');
        assert.match(issues[0]!.message, c.message);
      });
    }

    it(`refuses extends that would read more than ${MAX_EXTENDS_FILES} files (the same one listed again and again)`, () => {
      writeFileSync(join(dir, 'part.yaml'), 'seed: 1\n');
      const file = join(dir, 'many.yaml');
      writeFileSync(file, `extends: [${Array(10_000).fill('./part.yaml').join(', ')}]\n${BASE}`);
      const issues = refused(() => loadTeamSpec(file));
      assert.equal(issues.length, 1, issues.map((i) => i.message).join('\n'));
      assert.equal(issues[0]!.line, 1);
      assert.equal(issues[0]!.path, `extends[${MAX_EXTENDS_FILES - 1}]`);
      assert.match(issues[0]!.message, /extends reads more than 32 files in all/);
    });

    it('refuses a spec path that is a device or a FIFO, without reading it', () => {
      assert.match(refused(() => loadTeamSpec('/dev/zero'))[0]!.message, /is a device, not a regular file/);
      const fifo = join(dir, 'main-pipe.yaml');
      execFileSync('mkfifo', [fifo]);
      assert.match(refused(() => loadTeamSpec(fifo))[0]!.message, /is a FIFO, not a regular file/);
    });
  });
});

/** Every numeric field of a schema, with its key path, that lacks a finite minimum or maximum. */
function unbounded(schema: unknown, path: string, out: string[], skip: (path: string) => boolean): string[] {
  if (Array.isArray(schema)) schema.forEach((s, i) => unbounded(s, `${path}[${i}]`, out, skip));
  else if (schema && typeof schema === 'object') {
    const s = schema as Record<string, unknown>;
    const types = ([] as unknown[]).concat(s.type ?? []);
    if (
      !skip(path) &&
      (types.includes('number') || types.includes('integer')) &&
      s.enum === undefined &&
      s.const === undefined
    ) {
      const lo = s.minimum ?? s.exclusiveMinimum;
      const hi = s.maximum ?? s.exclusiveMaximum;
      if (typeof lo !== 'number' || typeof hi !== 'number') out.push(path);
    }
    for (const [k, v] of Object.entries(s)) unbounded(v, `${path}.${k}`, out, skip);
  }
  return out;
}

describe('numeric ranges in every schema', () => {
  const pluginSchemas = readdirSync(join(REPO, 'plugins')).flatMap((kind) =>
    readdirSync(join(REPO, 'plugins', kind)).flatMap((name) => {
      const folder = join(REPO, 'plugins', kind, name, 'schemas');
      try {
        return readdirSync(folder)
          .filter((f) => f.endsWith('.json'))
          .map((f) => join(folder, f));
      } catch {
        return [];
      }
    }),
  );

  it('the team schema bounds every number', () => {
    assert.deepEqual(
      unbounded(TEAM_SCHEMA, 'team', [], () => false),
      [],
    );
  });

  it("the policy kinds' config schemas given in code bound every number", async () => {
    // Policy plugins may give their config schema in code (tfjs-causal-lm does) rather than as a file under schemas/.
    const host = new PluginHost({ baseDirs: [REPO] });
    for (const kind of ['oracle', 'random', 'tfjs-causal-lm']) await host.ensure('policies', kind);
    const schemas = host.registry
      .list('policies')
      .map((p) => [p.id, (p.contribution as PolicyContribution).configSchema] as const);
    assert.ok(schemas.some(([id, schema]) => id === 'tfjs-causal-lm' && schema !== undefined));
    assert.deepEqual(
      schemas.flatMap(([id, schema]) => unbounded(schema, id, [], () => false)),
      [],
    );
  });

  it(`the plugins' config schemas bound every number (${pluginSchemas.length} schemas)`, () => {
    assert.ok(pluginSchemas.length >= 10);
    // The sandbox resource limits (`limits.*`) are bounded and tested with the sandbox.
    const skip = (path: string): boolean => /\.limits\.properties\.\w+$/.test(path);
    const missing = pluginSchemas.flatMap((f) =>
      unbounded(JSON.parse(readFileSync(f, 'utf8')), f.slice(REPO.length + 1), [], skip),
    );
    assert.deepEqual(missing, []);
  });
});
