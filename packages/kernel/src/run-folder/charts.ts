/**
 * The plots of a run's reports (the training report, the experiment table): each a vega-lite spec with its data
 * inlined, which the CLI renders to `plots/<name>.svg|png`; and the axis and legend style they share.
 */

/** One plot: a file stem and a vega-lite spec (data inlined). */
export interface ReportChart {
  /** File stem under `plots/`, e.g. `success`. */
  readonly name: string;
  /** Title for the markdown. */
  readonly title: string;
  /** The vega-lite spec. */
  readonly spec: Record<string, unknown>;
}

/** A step axis: whole steps only (no 1.4, 1.8 between them), written as integers (one point reads `1`, not `1.000000`). */
export const STEP_AXIS = { format: 'd', tickMinStep: 1 } as const;

/** A legend below the plot whose labels are never cut short (vega cuts them at 160 px by default). */
export const LEGEND = { orient: 'bottom', direction: 'vertical', labelLimit: 0 } as const;
