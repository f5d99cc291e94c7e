/**
 * Each process screens against an in-memory index of the active list version. A screening looks at which
 * version is active at most every SANCTIONS_LIST_CHECK_INTERVAL_MS (sooner after a NOTIFY from an
 * activation, see watchSanctionsList); when it has changed, the new version's index is built off to the
 * side and the reference swapped in one assignment, so a screening sees the whole old list or the whole
 * new one, never a mix and never a half-built index. A version's entries never change once it is active
 * (the database refuses it), so reading them in pages is reading one consistent list.
 */
import { ScreeningIndex } from '../../domain/screening/screeningIndex.ts';
import {
  findActiveVersionId,
  listEntriesPage,
  SANCTIONS_LIST_CHANNEL,
} from '../../store/repositories/sanctions.ts';
import type { Store } from '../../store/store.ts';
import type { Deps } from '../deps.ts';

/**
 * How stale a process's view of the active list may be: a new version is screened against everywhere
 * within this bound of its activation (at once where the activation's NOTIFY arrives). A look-up of the
 * active version is one indexed read, so this costs at most one query per process per interval.
 */
export const SANCTIONS_LIST_CHECK_INTERVAL_MS = 5_000;
/** Entries read per statement while building an index. */
export const SANCTIONS_INDEX_LOAD_PAGE_ROWS = 10_000;

interface IndexState {
  /** The index of the active version; undefined while none is active (or none was looked up yet). */
  index: ScreeningIndex | undefined;
  /** The active version last seen: null when none was active, undefined before the first look. */
  versionId: string | null | undefined;
  checkedAtMs: number;
  /** An activation was notified since the last look. */
  notified: boolean;
  refreshing: Promise<void> | undefined;
}

/** One state per database: processes share nothing, and tests with several databases stay apart. */
const states = new WeakMap<Store, IndexState>();

function stateOf(store: Store): IndexState {
  let state = states.get(store);
  if (!state) {
    state = {
      index: undefined,
      versionId: undefined,
      checkedAtMs: 0,
      notified: false,
      refreshing: undefined,
    };
    states.set(store, state);
  }
  return state;
}

/** Builds the index of one version from its entries, read in pages of SANCTIONS_INDEX_LOAD_PAGE_ROWS. */
export async function buildScreeningIndex(store: Store, versionId: string): Promise<ScreeningIndex> {
  const entries = [];
  let after: string | undefined;
  for (;;) {
    const page = await listEntriesPage(store, versionId, after, SANCTIONS_INDEX_LOAD_PAGE_ROWS);
    entries.push(...page);
    if (page.length < SANCTIONS_INDEX_LOAD_PAGE_ROWS) break;
    after = page[page.length - 1]?.entryId;
  }
  return new ScreeningIndex(versionId, entries);
}

async function refresh(store: Store, state: IndexState, nowMs: number): Promise<void> {
  // Cleared before the read: a NOTIFY arriving during it makes the next screening look again.
  state.notified = false;
  const activeId = (await findActiveVersionId(store)) ?? null;
  if (activeId !== state.versionId) {
    const index = activeId === null ? undefined : await buildScreeningIndex(store, activeId);
    state.index = index;
    state.versionId = activeId;
  }
  state.checkedAtMs = nowMs;
}

/**
 * The index of the active list version, as of at most SANCTIONS_LIST_CHECK_INTERVAL_MS ago (by
 * `deps.now`); undefined when no version is active. The call that finds a new version waits for its index,
 * and so do the calls that arrive meanwhile (one build per process); the others return at once.
 */
export async function activeScreeningIndex(deps: Deps): Promise<ScreeningIndex | undefined> {
  const state = stateOf(deps.store);
  const nowMs = deps.now().getTime();
  const fresh =
    state.versionId !== undefined &&
    !state.notified &&
    nowMs >= state.checkedAtMs &&
    nowMs - state.checkedAtMs < SANCTIONS_LIST_CHECK_INTERVAL_MS;
  if (!fresh) {
    state.refreshing ??= refresh(deps.store, state, nowMs).finally(() => {
      state.refreshing = undefined;
    });
    await state.refreshing;
  }
  return state.index;
}

/**
 * Listens for activations (where the store can), so this process's next screening looks at the active
 * version at once instead of within SANCTIONS_LIST_CHECK_INTERVAL_MS, and builds the active version's index
 * in the background so that the first screening does not wait for it. Resolves to a function that stops.
 */
export async function watchSanctionsList(
  deps: Deps,
  onError: (error: unknown) => void,
): Promise<() => Promise<void>> {
  const state = stateOf(deps.store);
  const stop = deps.store.listen
    ? await deps.store
        .listen(SANCTIONS_LIST_CHANNEL, () => {
          state.notified = true;
        })
        .catch((error: unknown) => {
          // Without notifications the check interval still bounds how stale the list is.
          onError(error);
          return undefined;
        })
    : undefined;
  const warming = activeScreeningIndex(deps).catch(onError);
  return async () => {
    await warming;
    await stop?.();
  };
}
