// The room page's charts: uPlot, bundled into static/dist/admin.js.

import uPlot from "uplot";
import { Point } from "./admin_types";
import { Series } from "./admin_series";
import { formatRate, formatSeconds, Strings, t } from "./admin_format";

interface ChartDef {
  fields: (keyof Point)[];
  labels: string[];
  colors: string[];
  dash?: (number[] | undefined)[];
  /** The y axis's labels, with their unit. */
  axis?: (v: number) => string;
  /** Where the y axis puts labels: for durations, whole seconds, minutes, hours. */
  incrs?: number[];
}

// Durations an axis steps by, so its labels read "30 s", "5 min", "2 h".
const DURATION_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 86400];

function defs(strings: Strings, lang: string): Record<string, ChartDef> {
  return {
    counts: {
      fields: ["waiting", "active", "capacity"],
      labels: [t(strings, "admin.stat.waiting"), t(strings, "admin.chart.active"), t(strings, "admin.chart.capacity")],
      colors: ["#1d4ed8", "#0f7a3d", "#8a5300"],
      dash: [undefined, undefined, [6, 4]],
    },
    rates: {
      fields: ["admitted_per_s", "entries_per_s", "abandoned_per_s"],
      labels: [t(strings, "admin.stat.admitted_rate"), t(strings, "admin.stat.entry_rate"), t(strings, "admin.stat.abandon_rate")],
      colors: ["#0f7a3d", "#1d4ed8", "#b42318"],
      axis: (v) => formatRate(v, strings, lang),
    },
    eta: {
      fields: ["tail_eta_s"],
      labels: [t(strings, "admin.stat.tail_eta")],
      colors: ["#6d28d9"],
      axis: (v) => formatSeconds(v, strings, lang),
      incrs: DURATION_STEPS,
    },
  };
}

export class Charts {
  private plots: { plot: uPlot; def: ChartDef; el: HTMLElement }[] = [];

  constructor(
    root: HTMLElement,
    private readonly series: Series,
    strings: Strings,
    lang: string,
  ) {
    const all = defs(strings, lang);
    for (const el of Array.from(root.querySelectorAll<HTMLElement>("[data-chart]"))) {
      const def = all[el.dataset.chart ?? ""];
      if (!def) continue;
      const opts: uPlot.Options = {
        width: Math.max(el.clientWidth, 280),
        height: 180,
        legend: { show: true },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true } },
        axes: [
          {},
          {
            size: 64,
            ...(def.axis ? { values: (_u: uPlot, splits: number[]) => splits.map((v) => def.axis!(v)) } : {}),
            ...(def.incrs ? { incrs: def.incrs } : {}),
          },
        ],
        series: [
          {},
          ...def.fields.map((_, i) => ({
            label: def.labels[i],
            stroke: def.colors[i],
            width: 2,
            dash: def.dash?.[i],
            spanGaps: false,
          })),
        ],
      };
      const plot = new uPlot(opts, series.columns(def.fields) as uPlot.AlignedData, el);
      el.dataset.points = String(series.points.length);
      this.plots.push({ plot, def, el });
    }
    if (typeof ResizeObserver === "function") {
      const ro = new ResizeObserver(() => this.resize());
      for (const p of this.plots) ro.observe(p.el);
    }
  }

  /** update redraws every chart from the series. */
  update(): void {
    for (const { plot, def, el } of this.plots) {
      plot.setData(this.series.columns(def.fields) as uPlot.AlignedData);
      el.dataset.points = String(this.series.points.length);
    }
  }

  private resize(): void {
    for (const { plot, el } of this.plots) {
      const w = Math.max(el.clientWidth, 280);
      if (Math.abs(plot.width - w) > 1) plot.setSize({ width: w, height: 180 });
    }
  }
}
