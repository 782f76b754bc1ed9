/**
 * The tree of one instance: turns down, seats across; in each cell the group's K branches side by side (the prompt
 * as the model saw it, the completion, the parse error, the reward terms, the reward and the advantage), with the
 * selected branch (the one the episode continued from) and the greedy branch marked, and what the next seat was
 * shown after the selected branch.
 */
import { html } from 'htm/preact';
import { useEffect } from 'preact/hooks';
import type { ChatMessage, Overview, TraceLine } from '../../src/common/types.js';
import type { DataSource } from '../source.js';
import { fmt, signed, useLoad } from '../format.js';
import { href, intParam, type Route } from '../route.js';

interface Group {
  readonly turn: number;
  readonly seat: string;
  readonly records: TraceLine[];
  /** The group's index in the page (play order). */
  readonly index: number;
}

/** Records → groups in play order (the trace writes a group's records together, groups in the order they close). */
function groupsOf(records: readonly TraceLine[]): Group[] {
  const out: Group[] = [];
  for (const r of records) {
    const last = out.at(-1);
    if (last && last.turn === r.turn && last.seat === r.seat) last.records.push(r);
    else out.push({ turn: r.turn, seat: r.seat, records: [r], index: out.length });
  }
  for (const g of out) g.records.sort((a, b) => a.branch - b.branch);
  return out;
}

function Messages({ messages }: { messages: readonly ChatMessage[] }) {
  return html`<div class="messages">
    ${messages.map(
      (m) =>
        html`<div class=${`msg ${m.role}`}>
          <span class="role">${m.role}</span>
          <pre>${m.content}</pre>
        </div>`,
    )}
  </div>`;
}

/** A seat's reward mix (r = α·team + Σ w·term), when the spec as run loads. */
type Mix = NonNullable<Overview['mix']>[string] | undefined;

/** The weight of a term in the mixed reward. */
const weightOf = (mix: Mix, term: string): number | undefined =>
  mix ? (term === 'team' ? mix.alpha : (mix.weights[term] ?? 1)) : undefined;

function BranchCard({ r, mix }: { r: TraceLine; mix: Mix }) {
  const cls = `branch${r.selected ? ' selected' : ''}${r.greedy ? ' greedy' : ''}${r.parseError ? ' malformed' : ''}`;
  return html`<div class=${cls} data-branch=${r.branch}>
    <div class="branch-head">
      <b>branch ${r.branch}</b>
      ${r.selected && html`<span class="badge selected">selected</span>`}${r.greedy && html`<span class="badge greedy">greedy</span>`}
      ${r.success && html`<span class="badge good">solved</span>`}${(r.done.terminated || r.done.truncated) && html`<span class="badge muted">${r.done.terminated ? 'terminated' : 'truncated'}</span>`}
    </div>
    <pre class="completion">${r.completion}</pre>
    ${r.parseError && html`<p class="parse-error">parse error: ${r.parseError}</p>`}
    <table class="terms">
      ${Object.entries(r.terms).map(([t, v]) => {
        const w = weightOf(mix, t);
        return html`<tr data-term=${t}>
          <td>${t}</td>
          <td class="num weight" title=${t === 'team' ? 'α, the weight of the team term' : `the weight of ${t}`}>
            ${w === undefined ? '' : `${t === 'team' ? 'α ' : '× '}${fmt(w, 2)}`}
          </td>
          <td class="num">${fmt(v)}</td>
        </tr>`;
      })}
      <tr class="total">
        <td colspan="2">reward</td>
        <td class="num" data-field="reward">${fmt(r.reward)}</td>
      </tr>
      <tr class="total">
        <td colspan="2">advantage</td>
        <td class="num" data-field="advantage">${signed(r.advantage)}</td>
      </tr>
    </table>
  </div>`;
}

function GroupCell({ g, next, focus, mix }: { g: Group; next: Group | undefined; focus: boolean; mix: Mix }) {
  const prompt = g.records[0]!.prompt;
  const nextShown = next?.records[0]?.prompt.filter((m) => m.role !== 'system').at(-1);
  return html`<div
    class=${`group${focus ? ' focus' : ''}`}
    id=${`g-${g.index}`}
    data-turn=${g.turn}
    data-seat=${g.seat}
  >
    <details class="prompt">
      <summary>
        prompt (${prompt.length} messages) · ${g.records[0]!.role} · policy ${g.records[0]!.policy}
        v${g.records[0]!.policyVersion}
      </summary>
      <${Messages} messages=${prompt} />
    </details>
    <div class="branch-row">${g.records.map((r) => html`<${BranchCard} key=${r.branch} r=${r} mix=${mix} />`)}</div>
    ${
      next &&
      nextShown &&
      html`<details class="next">
        <summary>then ${next.seat} (turn ${next.turn}) was shown</summary>
        <pre>${nextShown.content}</pre>
      </details>`
    }
  </div>`;
}

export function TreeView({
  source,
  route,
  trace,
  mix,
}: {
  source: DataSource;
  route: Route;
  trace: string;
  mix: Overview['mix'];
}) {
  const id = route.params.get('id') ?? '';
  const step = intParam(route.params, 'step') ?? null;
  const loaded = useLoad(() => source.episode(trace, id, step), [trace, id, step]);
  const records = loaded.data;
  const groups = records ? groupsOf(records) : [];
  const seats = [...new Set(groups.map((g) => g.seat))];
  const turns = [...new Set(groups.map((g) => g.turn))].sort((a, b) => a - b);
  // the group a link points at (turn and seat params), scrolled to and outlined
  const focusTurn = intParam(route.params, 'turn'),
    focusSeat = route.params.get('seat');
  useEffect(() => {
    const el = document.querySelector('.group.focus');
    if (el) el.scrollIntoView({ block: 'center' });
  }, [records]);
  if (!id)
    return html`<p class="muted">
      Pick an instance in the <a href=${href('steps', { trace })}>steps → groups</a> table.
    </p>`;
  if (loaded.error) return html`<p class="error">${loaded.error}</p>`;
  if (loaded.loading && !records) return html`<p class="muted">loading…</p>`;
  if (records === null || records === undefined)
    return html`<p class="error">Episode ${id} is not in this export (it was past the export's size budget).</p>`;
  const outcome = [...records].reverse().find((r) => r.selected);
  return html`<div class="tree-view">
    <h2>
      ${id}
      <span class="muted small"
        >${step !== null ? `step ${step} · ` : ''}${records[0]?.split ?? ''} · ${groups.length} groups · K =
        ${Math.max(...groups.map((g) => g.records.length))}</span
      >
      ${outcome?.success ? html`<span class="badge good">solved</span>` : html`<span class="badge bad">not solved</span>`}
    </h2>
    <p class="legend">
      <span class="swatch selected"></span> selected branch (the episode continued from it)
      <span class="swatch greedy"></span> greedy branch <span class="swatch malformed"></span> did not parse
    </p>
    <div class="tree" style=${`grid-template-columns: 4rem repeat(${seats.length}, minmax(0, 1fr))`}>
      <div></div>
      ${seats.map((s) => html`<div class="seat-head">${s}</div>`)}
      ${turns.map(
        (t) =>
          html`<div class="turn-head">turn ${t}</div>
            ${seats.map((s) => {
              const cell = groups.filter((g) => g.turn === t && g.seat === s);
              return html`<div class="cell">
                ${cell.map((g) => html`<${GroupCell} key=${g.index} g=${g} next=${groups[g.index + 1]} focus=${g.turn === focusTurn && g.seat === focusSeat} mix=${mix?.[g.seat]} />`)}
              </div>`;
            })}`,
      )}
    </div>
  </div>`;
}
