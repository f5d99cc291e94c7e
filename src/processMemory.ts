/**
 * How a long-running process (`mkoba serve`, `mkoba worker`) keeps its memory near its live data. V8 lets the
 * old generation grow past what survived the last full collection by a factor it derives from the machine's
 * memory (up to 4× on one with many gigabytes), so a server whose live heap is some 50 MB settled at 320–330
 * MB of RSS under sustained load, most of it garbage not yet collected. A smaller factor collects sooner.
 * Unlike `--max-old-space-size` it is not a cap: a process whose live data grows (a large sanctions list
 * loaded) still gets the memory it needs. The factor is read at every full collection, so it can be set
 * once the process runs; the sizes of V8's spaces cannot.
 *
 * Only on PostgreSQL: with the embedded database the process holds its WebAssembly memory (some 550 MB)
 * whatever the heap does, and there the more frequent collections cost latency (paced p99 43 → 60 ms)
 * for nothing worth having.
 */
import v8 from 'node:v8';

/** Old-generation growth past the live data before the next full collection, in percent. */
export const HEAP_GROWING_PERCENT = 20;

const FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/** Whether the operator chose the factor on node's command line or in NODE_OPTIONS. */
export function heapGrowingChosen(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((arg) => FLAG.test(arg));
}

/** Sets HEAP_GROWING_PERCENT for this process unless the operator chose a factor; true when set. */
export function limitHeapGrowth(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): boolean {
  if (heapGrowingChosen(execArgv, nodeOptions)) return false;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
