import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { troupe } from '../packages/cli/test/helpers/cli.js';
import { ReplayServer } from '../plugins/policies/openai/test/server.js';

const KEY = 'sk-troupe-test-6b1d0e77c2';

/** A two-seat Plan-Path team whose one policy is `kind: openai` on `baseUrl`. */
function teamSpec(baseUrl: string, algorithm: string): string {
  const seat = `{ role: planner, roleConfig: { maxMoves: 8 }, policy: shared, sampling: { temperature: 0, topP: 1, topK: 0, maxTokens: 16 } }`;
  return [
    'name: plan-path-openai-test',
    'seed: 3',
    'environment: { id: plan-path, config: { size: 5, wallProbability: 0, maxTurns: 2, maxMoves: 8, reward: shaped } }',
    `policies:\n  shared: { kind: openai, baseUrl: "${baseUrl}", model: m, apiKeyEnv: TROUPE_TEST_OPENAI_KEY, retries: 1 }`,
    `seats:\n  proposer: ${seat}\n  executor: ${seat}`,
    'rewards:\n  id: signals\n  config: { team: executed_reward }\n  seats:\n    proposer: { alpha: 1, config: { local: proposal_reward } }\n    executor: { alpha: 1, config: { local: executed_reward } }',
    `algorithm: ${algorithm}`,
    'evaluation: { split: test, episodes: 2 }',
    '',
  ].join('\n');
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) =>
    statSync(join(dir, n)).isDirectory() ? filesUnder(join(dir, n)) : [join(dir, n)],
  );
}

describe('kind: openai through the CLI', function () {
  this.timeout(120_000);
  let server: ReplayServer;
  let dir: string;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-openai-'));
    server = await ReplayServer.start({
      object: 'list',
      data: [{ id: 'm', object: 'model', created: 0, owned_by: 'test' }],
    });
    server.fallback = {
      body: {
        id: 'c',
        object: 'chat.completion',
        created: 0,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: '#### [R,R,R,D,D,D]' }, finish_reason: 'stop' }],
      },
    };
  });
  afterEach(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('plays a team through `troupe run`, and the key appears in no output, trace or log', async () => {
    const spec = join(dir, 'team.yaml');
    writeFileSync(spec, teamSpec(server.baseUrl, '{ name: none }'));
    const trace = join(dir, 'trace.jsonl');
    const res = await troupe(['run', spec, '-n', '2', '--trace', trace, '--json', '--no-progress'], {
      env: { TROUPE_TEST_OPENAI_KEY: KEY },
    });
    assert.equal(res.code, 0, res.stderr);
    const doc = JSON.parse(res.stdout) as {
      episodes: number;
      policies: Record<string, string>;
      parse_failure_rate: Record<string, number>;
    };
    assert.equal(doc.episodes, 2);
    assert.deepEqual(doc.policies, { shared: 'openai' });
    assert.deepEqual(doc.parse_failure_rate, { proposer: 0, executor: 0 }); // the server's move lists reached the role and parsed
    const chats = server.requests.filter((r) => r.url === '/v1/chat/completions');
    assert.ok(chats.length >= 2, `${chats.length} chat requests`);
    for (const r of server.requests) assert.equal(r.headers.authorization, `Bearer ${KEY}`);
    const turns = readFileSync(trace, 'utf8').trim().split('\n');
    assert.equal(turns.length, chats.length);
    assert.ok(turns.every((t) => t.includes('#### [R,R,R,D,D,D]')));
    for (const text of [res.stdout, res.stderr, ...filesUnder(dir).map((f) => readFileSync(f, 'utf8'))])
      assert.ok(!text.includes(KEY));
  });

  it('`troupe eval` plays it (episodes with their success rate)', async () => {
    const spec = join(dir, 'team.yaml');
    writeFileSync(spec, teamSpec(server.baseUrl, '{ name: none }'));
    const res = await troupe(['eval', spec, '-n', '2', '--json'], { env: { TROUPE_TEST_OPENAI_KEY: KEY } });
    assert.equal(res.code, 0, res.stderr);
    const doc = JSON.parse(res.stdout) as { episodes?: number };
    assert.equal(doc.episodes, 2, res.stdout);
    assert.ok(server.requests.filter((r) => r.url === '/v1/chat/completions').length >= 2);
  });

  it('`troupe validate` names bad config keys, and a key written into the spec is refused without being echoed', async () => {
    const spec = join(dir, 'team.yaml');
    writeFileSync(
      spec,
      teamSpec(server.baseUrl, '{ name: none }').replace('retries: 1 }', `retries: 99, apiKey: ${KEY} }`),
    );
    const res = await troupe(['validate', spec]);
    assert.equal(res.code, 1);
    assert.match(res.stdout + res.stderr, /policies\.shared\.retries: must be <= 20/);
    assert.match(res.stdout + res.stderr, /policies\.shared\.apiKey: unknown key \(did you mean "apiKeyEnv"\?\)/);
    assert.ok(!(res.stdout + res.stderr).includes(KEY));
  });

  it('`troupe train` plays it as a frozen partner when algorithm.freeze lists it', async () => {
    const spec = join(dir, 'team.yaml');
    writeFileSync(
      spec,
      teamSpec(server.baseUrl, '{ name: at-grpo, steps: 1, freeze: [shared], batchSize: 1, branches: 2 }'),
    );
    const res = await troupe(['train', spec, '--out', join(dir, 'run'), '--no-final-eval', '--json', '--no-progress'], {
      env: { TROUPE_TEST_OPENAI_KEY: KEY },
    });
    assert.equal(res.code, 0, res.stderr);
    assert.ok(server.requests.filter((r) => r.url === '/v1/chat/completions').length > 0);
    for (const text of [res.stdout, res.stderr, ...filesUnder(dir).map((f) => readFileSync(f, 'utf8'))])
      assert.ok(!text.includes(KEY));
  });

  it('`troupe train` refuses to train it, naming the policy and its seats', async () => {
    const spec = join(dir, 'team.yaml');
    writeFileSync(spec, teamSpec(server.baseUrl, '{ name: at-grpo, steps: 1 }'));
    const res = await troupe(['train', spec, '--out', join(dir, 'run'), '--no-progress'], {
      env: { TROUPE_TEST_OPENAI_KEY: KEY },
    });
    assert.equal(res.code, 1, res.stderr);
    assert.match(
      res.stderr,
      /troupe: policy 'shared' \(openai\) is inference-only and cannot be trained: its weights live on the server at http:\/\/127\.0\.0\.1:\d+\/v1 \(model "m"\)\. It plays seats proposer, executor\.\n {2}hint: list it in algorithm\.freeze/,
    );
    assert.equal(server.requests.filter((r) => r.url === '/v1/chat/completions').length, 0);
    assert.ok(!res.stderr.includes(KEY));
  });
});
