// The charts' history: points kept in time order for the last 15 minutes,
// seeded from the page and extended by each live message; or, for a range
// of the sale's history, the page's minutes alone (span Infinity).

import { Point } from "./admin_types";

export const SPAN_MS = 15 * 60 * 1000;

export class Series {
  private pts: Point[] = [];

  constructor(
    initial: Point[] = [],
    private readonly span: number = SPAN_MS,
  ) {
    for (const p of initial) this.add(p);
  }

  get points(): readonly Point[] {
    return this.pts;
  }

  /**
   * add appends p when it is newer than the last point (a message repeats
   * the latest sample until the next one) and drops points older than the
   * span before it. It reports whether p was added.
   */
  add(p: Point): boolean {
    const last = this.pts[this.pts.length - 1];
    if (last && p.t <= last.t) return false;
    this.pts.push(p);
    const cut = p.t - this.span;
    let i = 0;
    while (i < this.pts.length && this.pts[i].t < cut) i++;
    if (i > 0) this.pts.splice(0, i);
    return true;
  }

  /** columns are the points as uPlot wants them: x in seconds, then each field. */
  columns(fields: (keyof Point)[]): (number | null)[][] {
    const xs = this.pts.map((p) => p.t / 1000);
    return [xs, ...fields.map((f) => this.pts.map((p) => (p[f] ?? null) as number | null))];
  }
}
