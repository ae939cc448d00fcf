/** Summaries of measured samples. */

export interface Distribution {
  readonly count: number;
  readonly p50: number | null;
  readonly p95: number | null;
  readonly p99: number | null;
  readonly max: number | null;
  readonly mean: number | null;
}

/** Nearest-rank percentile of ascending `sorted` (p in 0..100); null when empty. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] ?? null;
}

export function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

export function distribution(samples: readonly number[]): Distribution {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  const at = (p: number): number | null => {
    const value = percentile(sorted, p);
    return value === null ? null : round(value);
  };
  return {
    count: sorted.length,
    p50: at(50),
    p95: at(95),
    p99: at(99),
    max: at(100),
    mean: sorted.length === 0 ? null : round(sum / sorted.length),
  };
}

export function median(values: readonly number[]): number | null {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** a ÷ b, or null when either is missing or b is 0. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined || b === null || b === undefined || b === 0) return null;
  return round(a / b, 2);
}

/** (max − min) ÷ median of repeated measurements: the noise margin of one metric. */
export function relativeSpread(values: readonly number[]): number | null {
  if (values.length < 2) return null;
  const mid = median(values);
  if (mid === null || mid === 0) return null;
  return round((Math.max(...values) - Math.min(...values)) / mid, 3);
}
