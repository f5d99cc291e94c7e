/**
 * Counting a wallet's activity in a window, pure. A wallet's recent movements are listed up to a bound; a
 * busier wallet's window holds more than the list, and what the rules count beyond it is tallied by the
 * database instead. A tally spec names one count the rules need: a direction, a window and, for the
 * structuring rule, a band of amounts.
 */

export interface Movement {
  amountMinor: bigint;
  at: Date;
}

export interface MovementTally {
  count: number;
  sumMinor: bigint;
}

export type MovementDirection = 'outgoing' | 'incoming';

export interface TallySpec {
  direction: MovementDirection;
  windowSeconds: number;
  /** Only movements of at least this much (minor units). */
  amountGteMinor?: bigint;
  /** Only movements of less than this much (minor units). */
  amountLtMinor?: bigint;
}

export const NO_MOVEMENTS: MovementTally = Object.freeze({ count: 0, sumMinor: 0n });

/** Identifies a spec: two rules asking for the same count share one tally. */
export function tallyKey(spec: TallySpec): string {
  return `${spec.direction}/${spec.windowSeconds}/${spec.amountGteMinor ?? ''}/${spec.amountLtMinor ?? ''}`;
}

/**
 * The movements of `list` inside the spec's window ending at `at` and in its band of amounts. A window is
 * open at its end: a movement already committed counts even when the clock that stamped it was ahead of
 * `at` (another process's, or a batch that read its clock before this one and committed first).
 */
function counted(list: readonly Movement[], at: Date, spec: TallySpec): Movement[] {
  const since = at.getTime() - spec.windowSeconds * 1_000;
  return list.filter((m) => {
    if (m.at.getTime() < since) return false;
    if (spec.amountGteMinor !== undefined && m.amountMinor < spec.amountGteMinor) return false;
    return spec.amountLtMinor === undefined || m.amountMinor < spec.amountLtMinor;
  });
}

/** The movements of `list` inside the spec's window ending at `at` (and its band of amounts), counted. */
export function tallyList(list: readonly Movement[], at: Date, spec: TallySpec): MovementTally {
  const inside = counted(list, at, spec);
  return { count: inside.length, sumMinor: inside.reduce((sum, m) => sum + m.amountMinor, 0n) };
}

/** When the oldest movement tallyList counts was created, in epoch ms; Infinity when it counts none. */
export function oldestListedMs(list: readonly Movement[], at: Date, spec: TallySpec): number {
  return counted(list, at, spec).reduce((oldest, m) => Math.min(oldest, m.at.getTime()), Infinity);
}

export function addTallies(a: MovementTally, b: MovementTally): MovementTally {
  return { count: a.count + b.count, sumMinor: a.sumMinor + b.sumMinor };
}

/** Each spec once, by key. */
export function distinctSpecs(specs: Iterable<TallySpec>): TallySpec[] {
  const byKey = new Map<string, TallySpec>();
  for (const spec of specs) byKey.set(tallyKey(spec), spec);
  return [...byKey.values()];
}

/** A counted spec's tally, by key. Every spec is counted when the wallet is read: a missing one is a bug, not none. */
export function countedTally(tallies: ReadonlyMap<string, MovementTally>, spec: TallySpec): MovementTally {
  const tally = tallies.get(tallyKey(spec));
  if (!tally) throw new Error(`activity tally ${tallyKey(spec)} was not counted`);
  return tally;
}

export function subtractTallies(a: MovementTally, b: MovementTally): MovementTally {
  return { count: a.count - b.count, sumMinor: a.sumMinor - b.sumMinor };
}

/** A half-open range of creation times, [since, before); `before` null: no end. */
export interface TimeRange {
  since: Date;
  before: Date | null;
}

/** The spec's window ending at `at`: open at its end, as tallyList counts it. */
export function windowRange(spec: TallySpec, at: Date): TimeRange {
  return { since: new Date(at.getTime() - spec.windowSeconds * 1_000), before: null };
}

/** What the spec's window lets go of as its end moves from `from` to `to`: counted at `from`, not at `to`. */
export function slidRange(spec: TallySpec, from: Date, to: Date): TimeRange & { before: Date } {
  const windowMs = spec.windowSeconds * 1_000;
  return { since: new Date(from.getTime() - windowMs), before: new Date(to.getTime() - windowMs) };
}

/** One string for a set of specs, whatever their order: a count kept for one set does not serve another. */
export function specsKey(specs: readonly TallySpec[]): string {
  return specs.map(tallyKey).sort().join('|');
}
