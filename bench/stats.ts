/** What one measured run yields, whoever drove it. */
export interface RunResult {
  /** Transfers that completed (HTTP 201, or a committed transaction). */
  transfers: number;
  durationS: number;
  transfersPerS: number;
  p50Ms: number;
  p99Ms: number;
  /** Everything that did not complete, by HTTP status or error code. */
  failures: Record<string, number>;
  /** CPU ms per transfer of the process running the application code (with PGlite: and the database). */
  appCpuMsPerTransfer?: number | undefined;
  /** CPU ms per transfer of all PostgreSQL server processes. */
  dbCpuMsPerTransfer?: number | undefined;
  /** Transfers per commit, when it could be read from the database afterwards. */
  transfersPerCommit?: number | undefined;
}

/** Nearest-rank percentile of an ascending list; NaN for an empty one. */
export function percentile(sortedAscending: readonly number[], p: number): number {
  if (sortedAscending.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sortedAscending.length);
  return sortedAscending[Math.min(sortedAscending.length, Math.max(1, rank)) - 1] ?? Number.NaN;
}

/** A run's figures from the latencies of what completed (sorted here), its duration and its failures. */
export function runResultOf(
  latenciesMs: number[],
  durationS: number,
  failures: Record<string, number>,
): RunResult {
  latenciesMs.sort((a, b) => a - b);
  return {
    transfers: latenciesMs.length,
    durationS,
    transfersPerS: latenciesMs.length / durationS,
    p50Ms: percentile(latenciesMs, 50),
    p99Ms: percentile(latenciesMs, 99),
    failures,
  };
}

export function failureText(failures: Record<string, number>): string {
  const entries = Object.entries(failures);
  return entries.length === 0 ? '0' : entries.map(([code, count]) => `${count}×${code}`).join(' ');
}

/** A small seeded generator (mulberry32): the same sequence on every run, for repeatable benchmarks. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
