/**
 * Steps → groups: per step the episodes' success, zero-variance and malformed shares; below, the step's (instance,
 * turn, seat) groups with their rewards and advantages by branch, sortable and filterable (seat, turn, failed
 * episodes, malformed completions, zero variance). The filters live in the location, so a filtered table is a link.
 */
import { html } from 'htm/preact';
import type { GroupQuery, GroupSummary, StepSummary } from '../../src/common/types.js';
import type { DataSource } from '../source.js';
import { maxAbsAdvantage, meanReward } from '../../src/common/queries.js';
import { fmt, pct, shortId, signed, useLoad } from '../format.js';
import { boolParam, href, intParam, navigate, type Route } from '../route.js';

const PAGE = 100;

/** The groups query of the location. */
function queryOf(params: URLSearchParams): GroupQuery {
  const sort = params.get('sort') as GroupQuery['sort'] | null;
  return {
    step: intParam(params, 'step'),
    seat: params.get('seat') || undefined,
    turn: intParam(params, 'turn'),
    failed: boolParam(params, 'failed'),
    malformed: boolParam(params, 'malformed'),
    zeroVariance: boolParam(params, 'zeroVariance'),
    sort: sort ?? undefined,
    desc: boolParam(params, 'desc'),
    offset: intParam(params, 'offset') ?? 0,
    limit: PAGE,
  };
}

function StepsTable({ steps, trace, current }: { steps: StepSummary[]; trace: string; current: number | undefined }) {
  return html`<table class="grid steps" data-testid="steps">
    <thead>
      <tr>
        <th class="num">step</th>
        <th class="num">episodes</th>
        <th class="num">success</th>
        <th class="num">groups</th>
        <th class="num">zero-variance</th>
        <th class="num">malformed</th>
      </tr>
    </thead>
    <tbody>
      ${steps.map(
        (s) =>
          html`<tr class=${current !== undefined && s.step === current ? 'current' : ''} data-step=${s.step ?? ''}>
            <td class="num"><a href=${href('steps', { trace, step: s.step })}>${s.step ?? 'eval'}</a></td>
            <td class="num">${s.episodes}</td>
            <td class="num" data-col="success">${fmt(s.successRate)}</td>
            <td class="num">${s.groups}</td>
            <td class="num">${pct(s.zeroVarianceShare)}</td>
            <td class="num">${pct(s.malformedShare)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** Branch values in a row, the selected one marked. */
function Branches({
  g,
  values,
  format,
}: {
  g: GroupSummary;
  values: readonly (number | null)[];
  format: (x: number | null) => string;
}) {
  return html`<span class="branches"
    >${values.map((v, b) => html`<span class=${`bv${b === g.selected ? ' sel' : ''}${b === g.greedy ? ' greedy' : ''}`} title=${`branch ${b}${b === g.selected ? ' (selected)' : ''}${b === g.greedy ? ' (greedy)' : ''}`}>${format(v)}</span>`)}</span
  >`;
}

function GroupRow({ g, trace }: { g: GroupSummary; trace: string }) {
  return html`<tr data-group=${g.id}>
    <td class="num">${g.step ?? '–'}</td>
    <td>
      <a
        href=${href('tree', { trace, id: g.episodeId, step: g.step, turn: g.turn, seat: g.seat })}
        title=${g.instanceUid}
        >${shortId(g.instanceUid)}</a
      >
    </td>
    <td class="num">${g.turn}</td>
    <td>${g.seat}</td>
    <td data-col="rewards"><${Branches} g=${g} values=${g.rewards} format=${(x: number | null) => fmt(x, 2)} /></td>
    <td data-col="advantages">
      <${Branches} g=${g} values=${g.advantages} format=${(x: number | null) => signed(x, 2)} />
    </td>
    <td class="num">${fmt(g.spread, 2)}</td>
    <td class="num">${fmt(meanReward(g), 2)}</td>
    <td class="num">${fmt(maxAbsAdvantage(g), 2)}</td>
    <td class="flags">
      ${g.zeroVariance ? html`<span class="badge zero">zero var</span>` : ''}${g.malformed > 0 ? html`<span class="badge bad">${g.malformed} malformed</span>` : ''}${g.episodeSuccess ? html`<span class="badge good">solved</span>` : html`<span class="badge muted">failed</span>`}
    </td>
  </tr>`;
}

export function StepsView({
  source,
  route,
  trace,
  tick,
}: {
  source: DataSource;
  route: Route;
  trace: string;
  tick: number;
}) {
  const params = route.params;
  const q = queryOf(params);
  const steps = useLoad(() => source.steps(trace), [trace, tick]);
  const page = useLoad(() => source.groups(trace, q), [trace, params.toString(), tick]);
  // the seats and turns the trace has, for the filters' choices
  const cells = useLoad(() => source.credit(trace), [trace, tick]);
  const seats = [...new Set((cells.data ?? []).map((c) => c.seat))].sort();
  const turns = [...new Set((cells.data ?? []).map((c) => c.turn))].sort((a, b) => a - b);
  const set = (changes: Record<string, string | number | boolean | undefined | null>) => {
    const next: Record<string, string> = Object.fromEntries(params.entries());
    for (const [k, v] of Object.entries(changes))
      if (v === undefined || v === null || v === '') delete next[k];
      else next[k] = String(v);
    if (!('offset' in changes)) delete next.offset;
    navigate('steps', { ...next, trace });
  };
  const tri = (key: 'failed' | 'malformed' | 'zeroVariance', label: string) =>
    html`<label
      >${label}
      <select
        data-filter=${key}
        value=${params.get(key) ?? ''}
        onChange=${(e: Event) => set({ [key]: (e.target as HTMLSelectElement).value })}
      >
        <option value="">any</option>
        <option value="true">yes</option>
        <option value="false">no</option>
      </select></label
    >`;
  const sortHead = (key: NonNullable<GroupQuery['sort']>, label: string) => {
    const on = q.sort === key;
    return html`<th
      class="num sortable"
      data-sort=${key}
      onClick=${() => set({ sort: key, desc: on ? !q.desc : true })}
    >
      ${label}${on ? (q.desc ? ' ▾' : ' ▴') : ''}
    </th>`;
  };
  return html`<div class="steps-view">
    ${steps.error && html`<p class="error">${steps.error}</p>`}
    ${steps.data && html`<${StepsTable} steps=${steps.data} trace=${trace} current=${q.step} />`}
    <h2>
      Groups ${q.step !== undefined ? `of step ${q.step}` : '(all steps)'}
      ${page.data && html`<span class="muted small" data-testid="group-count">${page.data.total} groups</span>`}
    </h2>
    <div class="filters">
      <label
        >step
        <input
          type="number"
          min="0"
          data-filter="step"
          value=${q.step ?? ''}
          onChange=${(e: Event) => set({ step: (e.target as HTMLInputElement).value })}
      /></label>
      <label
        >seat
        <select
          data-filter="seat"
          value=${q.seat ?? ''}
          onChange=${(e: Event) => set({ seat: (e.target as HTMLSelectElement).value })}
        >
          <option value="">any</option>
          ${seats.map((s) => html`<option value=${s}>${s}</option>`)}
        </select></label
      >
      <label
        >turn
        <select
          data-filter="turn"
          value=${q.turn ?? ''}
          onChange=${(e: Event) => set({ turn: (e.target as HTMLSelectElement).value })}
        >
          <option value="">any</option>
          ${turns.map((t) => html`<option value=${t}>${t}</option>`)}
        </select></label
      >
      ${tri('failed', 'episode failed')} ${tri('malformed', 'malformed')} ${tri('zeroVariance', 'zero variance')}
      <a class="reset" href=${href('steps', { trace })}>clear</a>
    </div>
    ${page.error && html`<p class="error">${page.error}</p>`}
    <p class="legend">
      <span class="bv sel">1.00</span> selected branch (the episode continued from it)
      <span class="bv greedy">1.00</span> greedy branch
    </p>
    ${
      page.data &&
      html`<table class="grid groups" data-testid="groups">
          <thead>
            <tr>
              <th class="num">step</th>
              <th>instance</th>
              ${sortHead('turn', 'turn')}${sortHead('seat', 'seat')}
              <th>rewards by branch</th>
              <th>advantages by branch</th>
              ${sortHead('spread', 'spread')}${sortHead('meanReward', 'mean r')}${sortHead('maxAbsAdvantage', 'max |A|')}
              <th>flags</th>
            </tr>
          </thead>
          <tbody>
            ${page.data.rows.map((g) => html`<${GroupRow} key=${g.id} g=${g} trace=${trace} />`)}
          </tbody>
        </table>
        <div class="pager">
          ${
            page.data.offset > 0 &&
            html`<a
              href="#"
              onClick=${(e: Event) => {
                e.preventDefault();
                set({ offset: Math.max(0, page.data!.offset - PAGE) });
              }}
              >← previous</a
            >`
          }
          <span class="muted"
            >${page.data.total === 0 ? 'no group matches' : `${page.data.offset + 1}–${page.data.offset + page.data.rows.length} of ${page.data.total}`}</span
          >
          ${
            page.data.offset + PAGE < page.data.total &&
            html`<a
              href="#"
              onClick=${(e: Event) => {
                e.preventDefault();
                set({ offset: page.data!.offset + PAGE });
              }}
              >next →</a
            >`
          }
        </div>`
    }
  </div>`;
}
