// The room page's charts: uPlot, bundled into static/dist/admin.js.

import uPlot from "uplot";
import { Point } from "./admin_types";
import { Series } from "./admin_series";
import { formatCount, Strings, t } from "./admin_format";

interface ChartDef {
  fields: (keyof Point)[];
  labels: string[];
  colors: string[];
  dash?: (number[] | undefined)[];
  /** unit is the y axis's label key: what its numbers count. */
  unit: string;
  /** scale turns a stored value into the axis's unit (seconds to minutes). */
  scale?: number;
  /** decimals the legend shows. */
  decimals: number;
}

function defs(strings: Strings): Record<string, ChartDef> {
  return {
    counts: {
      fields: ["waiting", "active", "capacity"], // vocab: not a state (a count)
      labels: [t(strings, "admin.stat.waiting"), t(strings, "admin.chart.active"), t(strings, "admin.chart.capacity")],
      colors: ["#1d4ed8", "#0f7a3d", "#8a5300"],
      dash: [undefined, undefined, [6, 4]],
      unit: "admin.axis.people",
      decimals: 0,
    },
    rates: {
      fields: ["admitted_per_s", "entries_per_s", "abandoned_per_s"],
      labels: [t(strings, "admin.stat.admitted_rate"), t(strings, "admin.stat.entry_rate"), t(strings, "admin.stat.abandon_rate")],
      colors: ["#0f7a3d", "#1d4ed8", "#b42318"],
      unit: "admin.axis.per_s",
      decimals: 1,
    },
    lapsed: {
      fields: ["no_shows_per_min", "idle_per_min"],
      labels: [t(strings, "admin.stat.no_show_rate"), t(strings, "admin.stat.idle_rate")],
      colors: ["#b42318", "#8a5300"],
      unit: "admin.axis.per_min",
      decimals: 1,
    },
    eta: {
      fields: ["tail_eta_s"],
      labels: [t(strings, "admin.stat.tail_eta")],
      colors: ["#6d28d9"],
      unit: "admin.axis.minutes",
      scale: 1 / 60,
      decimals: 1,
    },
  };
}

/** TIME_STEPS are the time axis's tick steps in seconds, from a second to a week. */
const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800];

/** chartValue is a legend value: the number in the axis's unit, or "–" for none. */
export function chartValue(v: number | null | undefined, decimals: number, lang: string): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "–";
  if (decimals === 0) return formatCount(v, lang);
  try {
    return new Intl.NumberFormat(lang, { maximumFractionDigits: decimals }).format(v);
  } catch {
    return v.toFixed(decimals);
  }
}

/**
 * clockFormat shows a sample's time of day as lang does ("오후 3:04:05"),
 * not uPlot's English "3:04:05pm", in the browser's zone (zone for tests);
 * with the date in front ("Dec 3, 9:00 PM") for a range over more than one day.
 */
export function clockFormat(lang: string, seconds: boolean, withDate = false, zone?: string): (unixSeconds: number) => string {
  const opts: Intl.DateTimeFormatOptions = { hour: "numeric", minute: "2-digit", second: seconds ? "2-digit" : undefined, timeZone: zone };
  if (withDate) Object.assign(opts, { month: "short", day: "numeric" });
  let f: Intl.DateTimeFormat;
  try {
    f = new Intl.DateTimeFormat(lang, opts);
  } catch {
    f = new Intl.DateTimeFormat(undefined, opts);
  }
  return (s: number) => f.format(new Date(s * 1000));
}

/** spansDays: the points' first and last fall on different days in the browser's zone (zone for tests). */
export function spansDays(firstMs: number, lastMs: number, zone?: string): boolean {
  const day = new Intl.DateTimeFormat("en-CA", { year: "numeric", month: "2-digit", day: "2-digit", timeZone: zone });
  return day.format(new Date(firstMs)) !== day.format(new Date(lastMs));
}

export class Charts {
  private plots: { plot: uPlot; def: ChartDef; el: HTMLElement }[] = [];

  constructor(
    root: HTMLElement,
    private readonly series: Series,
    strings: Strings,
    lang: string,
  ) {
    const all = defs(strings);
    const pts = series.points;
    const days = pts.length > 1 && spansDays(pts[0].t, pts[pts.length - 1].t);
    const legendTime = clockFormat(lang, true, days);
    const axisTime = clockFormat(lang, false, days);
    const axisTimeSeconds = clockFormat(lang, true, days);
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
          {
            // Ticks at least a second apart, and under a minute apart (a
            // chart's first minutes) they say their seconds, so no two read
            // the same. (uPlot's own steps go down to milliseconds, which a
            // chart of its first second would label "8:29:44" twice.)
            incrs: TIME_STEPS,
            values: (_u: uPlot, splits: number[], _axis: number, _space: number, incr: number) => {
              const ticks = splits.map((v) => (incr < 60 ? axisTimeSeconds : axisTime)(v));
              el.dataset.ticks = ticks.join("|"); // the canvas's labels, for tests
              return ticks;
            },
          },
          { size: 56, label: t(strings, def.unit), labelSize: 18 },
        ],
        series: [
          { label: t(strings, "admin.chart.time"), value: (_u: uPlot, v: number | null) => (v === null ? "–" : legendTime(v)) },
          ...def.fields.map((_, i) => ({
            label: def.labels[i],
            stroke: def.colors[i],
            width: 2,
            dash: def.dash?.[i],
            spanGaps: false,
            value: (_u: uPlot, v: number | null) => chartValue(v, def.decimals, lang),
          })),
        ],
        hooks: {
          // Away from the cursor the legend shows the latest values, not "--":
          // uPlot sets the legend after each redraw and when the cursor leaves.
          setLegend: [(u: uPlot) => Charts.latest(u)],
        },
      };
      const plot = new uPlot(opts, this.columns(def), el);
      el.dataset.unit = t(strings, def.unit); // the axis label is drawn on the canvas
      el.dataset.points = String(series.points.length);
      this.plots.push({ plot, def, el });
    }
    if (typeof ResizeObserver === "function") {
      const ro = new ResizeObserver(() => this.resize());
      for (const p of this.plots) ro.observe(p.el);
    }
  }

  private columns(def: ChartDef): uPlot.AlignedData {
    const cols = this.series.columns(def.fields);
    if (def.scale !== undefined) {
      const k = def.scale;
      for (let i = 1; i < cols.length; i++) cols[i] = cols[i].map((v) => (v === null ? null : v * k));
    }
    return cols as uPlot.AlignedData;
  }

  /** latest points the legend at the last sample while no cursor is over the chart. */
  private static latest(u: uPlot): void {
    if (u.cursor.idx !== null && u.cursor.idx !== undefined) return;
    const n = u.data[0]?.length ?? 0;
    if (n > 0 && u.legend.idx !== n - 1) u.setLegend({ idx: n - 1 });
  }

  /** update redraws every chart from the series. */
  update(): void {
    for (const { plot, def, el } of this.plots) {
      plot.setData(this.columns(def));
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
