/** The viewer's HTTP API: answers, validation errors naming the parameter, unknown traces and episodes. */
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { buildServer, renderPage, RunFolder } from '../src/index.js';
import { FIXTURE_RUN, fixtureRecords } from './helpers/fixture.js';

describe('viewer API', () => {
  let app: FastifyInstance;
  before(() => {
    app = buildServer(new RunFolder(FIXTURE_RUN), { js: 'void 0', css: '' });
  });
  after(() => app.close());
  const get = async (url: string) => {
    const r = await app.inject({ method: 'GET', url });
    return { status: r.statusCode, body: r.json() as Record<string, unknown> & unknown[] };
  };

  it('serves the page and its bundle', async () => {
    const page = await app.inject({ method: 'GET', url: '/' });
    assert.match(page.headers['content-type'] as string, /text\/html/);
    assert.match(page.body, /<script src="app\.js"><\/script>/);
    assert.equal((await app.inject({ method: 'GET', url: '/app.js' })).body, 'void 0');
  });

  it('pages and filters groups', async () => {
    const { status, body } = await get('/api/groups?trace=trace.jsonl&step=1&seat=executor&limit=2');
    assert.equal(status, 200);
    const records = fixtureRecords().filter((r) => r.step === 1 && r.seat === 'executor');
    assert.equal(body.total, new Set(records.map((r) => `${r.episodeId}|${r.turn}`)).size);
    assert.equal((body.rows as unknown[]).length, 2);
  });

  it('rejects bad parameters with a message naming them', async () => {
    assert.deepEqual(await get('/api/groups?trace=trace.jsonl&step=two'), {
      status: 400,
      body: { error: 'querystring/step must be integer' },
    });
    assert.deepEqual(await get('/api/groups?trace=trace.jsonl&sort=size'), {
      status: 400,
      body: { error: 'querystring/sort must be equal to one of the allowed values' },
    });
    assert.equal((await get('/api/groups')).status, 400);
  });

  it('answers 404 with the traces it has for an unknown trace, and for an unknown episode', async () => {
    const t = await get('/api/steps?trace=nope.jsonl');
    assert.equal(t.status, 404);
    assert.match(
      String(t.body.error),
      /trace nope\.jsonl: not a trace of .* \(its traces: trace\.jsonl, evals\/step-0\.trace\.jsonl, evals\/step-3-sampled\.trace\.jsonl\)/,
    );
    const e = await get('/api/episode?trace=trace.jsonl&id=nobody&step=1');
    assert.deepEqual(e, { status: 404, body: { error: 'episode nobody of step 1: not in trace.jsonl' } });
  });

  it("returns an episode's records and the paired comparison of two traces", async () => {
    const first = fixtureRecords('evals/step-0.trace.jsonl')[0]!;
    const e = await get(`/api/episode?trace=evals/step-0.trace.jsonl&id=${encodeURIComponent(first.episodeId)}`);
    assert.deepEqual(e.body[0], first);
    const c = await get('/api/compare?a=evals/step-0.trace.jsonl&b=evals/step-3-sampled.trace.jsonl');
    assert.equal(c.body.paired, new Set(fixtureRecords('evals/step-0.trace.jsonl').map((r) => r.instanceUid)).size);
  });

  it('inlines a snapshot whose text holds </script> without ending the script element', () => {
    const hostile = { completion: '</script><script>alert(1)</script><!-- x' };
    const page = renderPage('t', { assets: { js: 'var s = "</script>";', css: '' }, snapshot: hostile });
    assert.equal(page.match(/<\/script>/g)!.length, 2, 'only the data and the app scripts close');
    const data = /<script id="troupe-snapshot" type="application\/json">(.*?)<\/script>/s.exec(page)![1]!;
    assert.deepEqual(JSON.parse(data), hostile);
  });
});
