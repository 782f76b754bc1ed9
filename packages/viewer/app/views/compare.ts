/**
 * Compare two traces of the same instances (e.g. the warm start's evaluation and the trained model's) paired by
 * instance uid: success on each side, gained and lost episodes with the exact McNemar p, and for each pair the first
 * (turn, seat) where the two selected paths part; a pair opens side by side.
 */
import { html } from 'htm/preact';
import type { PairedEpisode, TraceLine } from '../../src/common/types.js';
import type { DataSource } from '../source.js';
import { fmt, shortId, useLoad } from '../format.js';
import { href, navigate, type Route } from '../route.js';

/** The selected path of an episode, one entry per (turn, seat). */
function Path({ records, parts }: { records: readonly TraceLine[] | null | undefined; parts: PairedEpisode['parts'] }) {
  if (!records) return html`<p class="muted">not available</p>`;
  const path = records.filter((r) => r.selected);
  return html`<ol class="path">
    ${path.map(
      (r) =>
        html`<li class=${parts && r.turn === parts.turn && r.seat === parts.seat ? 'parts' : ''}>
          <span class="muted">turn ${r.turn} · ${r.seat}</span> <code>${r.completion}</code> r
          ${fmt(r.reward, 2)}${r.parseError ? html` <span class="badge bad">malformed</span>` : ''}${r.success ? html` <span class="badge good">solved</span>` : ''}
        </li>`,
    )}
  </ol>`;
}

function Pair({ source, a, b, row }: { source: DataSource; a: string; b: string; row: PairedEpisode }) {
  const ra = useLoad(
    () => (row.a ? source.episode(a, row.a.episodeId, null) : Promise.resolve(null)),
    [a, row.instanceUid],
  );
  const rb = useLoad(
    () => (row.b ? source.episode(b, row.b.episodeId, null) : Promise.resolve(null)),
    [b, row.instanceUid],
  );
  return html`<tr class="pair-detail">
    <td colspan="5">
      <div class="side-by-side">
        <div>
          <h4>
            ${a} ${row.a && html`<a class="small" href=${href('tree', { trace: a, id: row.a.episodeId })}>tree →</a>`}
          </h4>
          <${Path} records=${ra.data} parts=${row.parts} />
        </div>
        <div>
          <h4>
            ${b} ${row.b && html`<a class="small" href=${href('tree', { trace: b, id: row.b.episodeId })}>tree →</a>`}
          </h4>
          <${Path} records=${rb.data} parts=${row.parts} />
        </div>
      </div>
    </td>
  </tr>`;
}

export function CompareView({
  source,
  route,
  traces,
}: {
  source: DataSource;
  route: Route;
  traces: readonly string[];
}) {
  const a = route.params.get('a') ?? traces[0] ?? '';
  const b = route.params.get('b') ?? traces[1] ?? traces[0] ?? '';
  const status = route.params.get('status') ?? '';
  const open = route.params.get('open');
  const cmp = useLoad(() => source.compare(a, b), [a, b]);
  const go = (changes: Record<string, string | null>) => navigate('compare', { a, b, status, open, ...changes });
  const pick = (key: 'a' | 'b', value: string) =>
    html`<select
      data-pick=${key}
      value=${value}
      onChange=${(e: Event) => go({ [key]: (e.target as HTMLSelectElement).value, open: null })}
    >
      ${traces.map((t) => html`<option value=${t}>${t}</option>`)}
    </select>`;
  const c = cmp.data;
  const rows = c ? c.rows.filter((r) => !status || r.status === status) : [];
  return html`<div class="compare-view">
    <div class="filters">
      <label>A ${pick('a', a)}</label><label>B ${pick('b', b)}</label>
      <label
        >show
        <select
          data-filter="status"
          value=${status}
          onChange=${(e: Event) => go({ status: (e.target as HTMLSelectElement).value, open: null })}
        >
          <option value="">all</option>
          <option value="gained">gained</option>
          <option value="lost">lost</option>
          <option value="both">solved by both</option>
          <option value="neither">solved by neither</option>
          <option value="unpaired">unpaired</option>
        </select></label
      >
    </div>
    ${cmp.error && html`<p class="error">${cmp.error}</p>`}
    ${
      c &&
      html`<p class="big summary" data-testid="compare-summary">
          <span>${fmt(c.paired ? c.successA / c.paired : null)} → ${fmt(c.paired ? c.successB / c.paired : null)}</span>
          <span class="muted">success on ${c.paired} paired instances</span
          ><b class="good" data-testid="gained">+${c.gained} gained</b
          ><b class="bad" data-testid="lost">−${c.lost} lost</b>
          <span class="muted">exact McNemar p = ${fmt(c.pValue)}</span>
        </p>
        <table class="grid" data-testid="pairs">
          <thead>
            <tr>
              <th>instance</th>
              <th>A</th>
              <th>B</th>
              <th>status</th>
              <th>paths part at</th>
            </tr>
          </thead>
          <tbody>
            ${rows.map(
              (r) =>
                html`<tr
                    class=${`pair ${r.status}`}
                    data-uid=${r.instanceUid}
                    onClick=${() => go({ open: open === r.instanceUid ? null : r.instanceUid })}
                  >
                    <td title=${r.instanceUid}>
                      <a href=${href('compare', { a, b, status, open: r.instanceUid })}>${shortId(r.instanceUid)}</a>
                    </td>
                    <td>${r.a ? (r.a.success ? '✓ solved' : '✗') : '–'}</td>
                    <td>${r.b ? (r.b.success ? '✓ solved' : '✗') : '–'}</td>
                    <td>
                      <span class=${`badge ${r.status === 'gained' ? 'good' : r.status === 'lost' ? 'bad' : 'muted'}`}
                        >${r.status}</span
                      >
                    </td>
                    <td>
                      ${r.parts ? `turn ${r.parts.turn} · ${r.parts.seat}` : r.status === 'unpaired' ? '' : 'identical'}
                    </td>
                  </tr>
                  ${open === r.instanceUid && html`<${Pair} source=${source} a=${a} b=${b} row=${r} />`}`,
            )}
          </tbody>
        </table>`
    }
  </div>`;
}
