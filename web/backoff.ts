// Exponential backoff with full jitter: every client picks a random delay
// under a growing ceiling, so a crowd cut off at once does not come back at once.

export interface BackoffOptions {
  baseMs: number;
  capMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1000, capMs: 30_000 };

/** backoffCeiling is the largest delay for the nth retry (1-based). */
export function backoffCeiling(attempt: number, opts: BackoffOptions = DEFAULT_BACKOFF): number {
  if (attempt <= 0) return 0;
  // Cap the exponent too, so a long outage cannot overflow to Infinity.
  return Math.min(opts.capMs, opts.baseMs * 2 ** Math.min(attempt - 1, 30));
}

/** backoffDelay draws the delay before the nth retry, uniformly in [0, ceiling). */
export function backoffDelay(
  attempt: number,
  opts: BackoffOptions = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  return Math.floor(random() * backoffCeiling(attempt, opts));
}
