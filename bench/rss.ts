/**
 * A process's resident memory, read from /proc/<pid>/status every interval while a benchmark runs: the
 * figure at the start, the peak, the end, and one sample a minute so a reader sees whether it trends up.
 */
import { readFileSync } from 'node:fs';

const RSS_SAMPLE_INTERVAL_MS = 1_000;
const RSS_TREND_EVERY_S = 60;

export interface RssSummary {
  startMb: number;
  peakMb: number;
  endMb: number;
  /** [seconds since the start, MB], one a minute. */
  trend: [number, number][];
}

function rssMb(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Starts sampling; stop() ends it and returns what it saw (undefined where /proc is not available). */
export function sampleRss(pid: number): { stop(): RssSummary | undefined } {
  const startedAt = performance.now();
  const first = rssMb(pid);
  if (first === undefined) return { stop: () => undefined };
  const summary: RssSummary = { startMb: first, peakMb: first, endMb: first, trend: [[0, first]] };
  const timer = setInterval(() => {
    const mb = rssMb(pid);
    if (mb === undefined) return;
    summary.peakMb = Math.max(summary.peakMb, mb);
    summary.endMb = mb;
    const atS = (performance.now() - startedAt) / 1000;
    const last = summary.trend.at(-1) as [number, number];
    if (atS - last[0] >= RSS_TREND_EVERY_S) summary.trend.push([Math.round(atS), mb]);
  }, RSS_SAMPLE_INTERVAL_MS);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      const mb = rssMb(pid);
      if (mb !== undefined) {
        summary.endMb = mb;
        summary.peakMb = Math.max(summary.peakMb, mb);
      }
      return summary;
    },
  };
}
