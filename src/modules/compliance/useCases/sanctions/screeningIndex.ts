/**
 * Each process screens against an in-memory index of a list version. Which version is active is looked up
 * at most every SANCTIONS_LIST_CHECK_INTERVAL_MS (at once when an activation's NOTIFY arrives, see
 * watchSanctionsList). A version newly seen active has its index built beside the one in use, in slices
 * between other work, and swapped in with one assignment once complete: until then the previous version
 * screens, so a screening never waits for a build while the process has an index, and each screening reports
 * the version it actually used. Only a process with no index at all (none built yet, or the first list ever
 * imported) waits for the build: while a list is active, nothing is screened against nothing. A version's
 * entries never change once it is active (the database refuses it), so reading them in pages is reading one
 * consistent list.
 */

import type { Deps } from '../../../../app/deps.ts';
import { type ScreeningIndex, ScreeningIndexBuilder } from '../../../../domain/screening/screeningIndex.ts';
import type { Store } from '../../../../store/store.ts';
import { findActiveVersionId, listEntriesPage, SANCTIONS_LIST_CHANNEL } from '../../repository/sanctions.ts';

/**
 * How stale a process's view of the active list may be: a new version starts building everywhere within
 * this bound of its activation (at once where the activation's NOTIFY arrives). A look-up of the active
 * version is one indexed read, so this costs at most one query per process per interval.
 */
export const SANCTIONS_LIST_CHECK_INTERVAL_MS = 5_000;
/**
 * Entries read per statement while building an index, and indexed per slice: small enough that the
 * embedded database, which answers one statement at a time, serves requests between pages.
 */
export const SANCTIONS_INDEX_LOAD_PAGE_ROWS = 500;

interface IndexState {
  /** The index screenings use; undefined until the first build finishes. */
  index: ScreeningIndex | undefined;
  /** The active version last looked up: null when none was active, undefined before the first look. */
  activeVersionId: string | null | undefined;
  checkedAtMs: number;
  /** An activation was notified since the last look. */
  notified: boolean;
  looking: Promise<void> | undefined;
  /** The one build in flight: a version activated meanwhile is built after it. */
  building: { versionId: string; done: Promise<void> } | undefined;
  /** Where failures of work nobody waits for go (watchSanctionsList's onError). */
  reportError: (error: unknown) => void;
}

/** One state per database: processes share nothing, and tests with several databases stay apart. */
const states = new WeakMap<Store, IndexState>();

function stateOf(store: Store): IndexState {
  let state = states.get(store);
  if (!state) {
    state = {
      index: undefined,
      activeVersionId: undefined,
      checkedAtMs: 0,
      notified: false,
      looking: undefined,
      building: undefined,
      // Until a watcher gives one: the failed work is retried at the next look-up.
      reportError: () => {},
    };
    states.set(store, state);
  }
  return state;
}

/** Lets the event loop serve other work: an embedded database answers a statement without yielding. */
function yieldToOtherWork(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Builds the index of one version from its entries, read and indexed in slices of
 * SANCTIONS_INDEX_LOAD_PAGE_ROWS with a turn of the event loop between them.
 */
export async function buildScreeningIndex(store: Store, versionId: string): Promise<ScreeningIndex> {
  const builder = new ScreeningIndexBuilder(versionId);
  let after: string | undefined;
  for (;;) {
    const page = await listEntriesPage(store, versionId, after, SANCTIONS_INDEX_LOAD_PAGE_ROWS);
    builder.add(page);
    if (page.length < SANCTIONS_INDEX_LOAD_PAGE_ROWS) break;
    after = page[page.length - 1]?.entryId;
    await yieldToOtherWork();
  }
  return builder.build();
}

/**
 * Starts building a version's index unless it is the one in use or being built. One build at a time: a
 * version activated during a build is started when that build has been swapped in.
 */
function startBuild(deps: Deps, state: IndexState, versionId: string): void {
  if (state.index?.listVersionId === versionId || state.building) return;
  const build = deps.buildScreeningIndex ?? buildScreeningIndex;
  const done = build(deps.store, versionId).then(
    (index) => {
      state.index = index;
      state.building = undefined;
      const active = state.activeVersionId;
      if (active && active !== index.listVersionId) startBuild(deps, state, active);
    },
    (error: unknown) => {
      // The previous index (if any) stays in use; the next look-up tries again.
      state.building = undefined;
      throw error;
    },
  );
  state.building = { versionId, done };
  // Those waiting for the build get its error; otherwise it is reported here.
  done.catch(state.reportError);
}

/** Looks up the active version and starts building its index when it is new to this process. */
function lookUp(deps: Deps, state: IndexState): Promise<void> {
  state.looking ??= (async () => {
    // Cleared before the read: a NOTIFY arriving during it makes the next screening look again.
    state.notified = false;
    const checkedAtMs = deps.now().getTime();
    const activeId = (await findActiveVersionId(deps.store)) ?? null;
    state.activeVersionId = activeId;
    state.checkedAtMs = checkedAtMs;
    if (activeId !== null) startBuild(deps, state, activeId);
  })().finally(() => {
    state.looking = undefined;
  });
  return state.looking;
}

/**
 * The index to screen with: the newest version this process has built. When the active version was
 * looked up more than SANCTIONS_LIST_CHECK_INTERVAL_MS ago (by `deps.now`) or an activation was notified, a
 * look-up starts, and with it the build of a new version, without being waited for. Waits only when the
 * process has no index yet while a version is active (or may be: before its first look-up). Undefined only
 * when no version is active.
 */
export async function screeningIndexInUse(deps: Deps): Promise<ScreeningIndex | undefined> {
  const state = stateOf(deps.store);
  const nowMs = deps.now().getTime();
  const fresh =
    state.activeVersionId !== undefined &&
    !state.notified &&
    nowMs >= state.checkedAtMs &&
    nowMs - state.checkedAtMs < SANCTIONS_LIST_CHECK_INTERVAL_MS;
  if (!fresh) {
    const looking = lookUp(deps, state);
    if (state.index) {
      looking.catch(state.reportError);
      return state.index;
    }
    await looking;
  }
  if (state.index || state.activeVersionId === null) return state.index;
  if (state.activeVersionId !== undefined) startBuild(deps, state, state.activeVersionId);
  await state.building?.done;
  if (!state.index) throw new Error('the active sanctions list has no screening index in this process');
  return state.index;
}

/**
 * Resolves once this process's look-up and build in flight, if any, have ended (with the new index
 * swapped in, or failed). For a caller that must know the switch happened: a test, a stopping process.
 */
export async function screeningIndexSettled(deps: Deps): Promise<void> {
  const state = stateOf(deps.store);
  while (state.looking || state.building) {
    await Promise.allSettled([state.looking, state.building?.done]);
  }
}

/**
 * Listens for activations (where the store can) and starts building a notified version at once; looks up
 * the active version and waits for its first build, so that a process starting with a list never makes a
 * screening wait (its failure goes to onError: screenings then wait for the build themselves). Failures of
 * later background look-ups and builds go to onError too. Resolves to a function that stops listening and
 * waits for the work in flight.
 */
export async function watchSanctionsList(
  deps: Deps,
  onError: (error: unknown) => void,
): Promise<() => Promise<void>> {
  const state = stateOf(deps.store);
  state.reportError = onError;
  const stop = deps.store.listen
    ? await deps.store
        .listen(SANCTIONS_LIST_CHANNEL, () => {
          state.notified = true;
          lookUp(deps, state).catch(onError);
        })
        .catch((error: unknown) => {
          // Without notifications the check interval still bounds how stale the list is.
          onError(error);
          return undefined;
        })
    : undefined;
  await lookUp(deps, state).catch(onError);
  // A failed build has been reported by startBuild.
  await state.building?.done.catch(() => {});
  return async () => {
    await stop?.();
    await screeningIndexSettled(deps);
    state.reportError = () => {};
  };
}
