/**
 * The reads of a setting an organization keeps in numbered versions (the authorization policy, the fee
 * schedule), as their use cases answer them: an organization that never wrote one has version 1, the
 * setting's initial version, made as of now and not stored. And the writers' side: the current version
 * read in a transaction or through the process cache (version 1 stored the first time), and the current
 * version a change is written over.
 */
import { requireBaseVersion, resourceMissing } from '../domain/errors.ts';
import type { Page } from '../domain/pagination.ts';
import type { Queryable } from '../store/store.ts';
import type { Deps } from './deps.ts';
import type { OrganizationCache } from './organizationCache.ts';

/** A setting's stored versions, as its repository reads them, and its initial version. */
export interface SettingVersions<T> {
  findCurrent(db: Queryable, organizationId: string): Promise<T | undefined>;
  findVersion(db: Queryable, organizationId: string, version: number): Promise<T | undefined>;
  /** Newest first, up to `rowsMax` below `beforeVersion` (when given). */
  listVersions(
    db: Queryable,
    organizationId: string,
    page: { beforeVersion: number | undefined; rowsMax: number },
  ): Promise<T[]>;
  /** Version 1, for an organization that never wrote one. */
  initial(deps: Deps, organizationId: string, now: Date): T;
  /** The name a missing version's 404 gives it (`fee schedule version`). */
  what: string;
}

/** The current version, one version by number (404 when there is none), and a page of versions newest first. */
export function settingVersionReads<T>(setting: SettingVersions<T>) {
  return {
    async getCurrent(deps: Deps, organizationId: string): Promise<T> {
      return (
        (await setting.findCurrent(deps.store, organizationId)) ??
        setting.initial(deps, organizationId, deps.now())
      );
    },

    async getVersion(deps: Deps, organizationId: string, version: number): Promise<T> {
      const found =
        (await setting.findVersion(deps.store, organizationId, version)) ??
        (version === 1 && !(await setting.findCurrent(deps.store, organizationId))
          ? setting.initial(deps, organizationId, deps.now())
          : undefined);
      if (!found) throw resourceMissing(setting.what, String(version));
      return found;
    },

    /** `request.limit` versions below `beforeVersion`; the initial version alone when none is stored. */
    async listVersions(
      deps: Deps,
      organizationId: string,
      request: { limit: number; beforeVersion?: number | undefined },
    ): Promise<Page<T>> {
      const rows = await setting.listVersions(deps.store, organizationId, {
        beforeVersion: request.beforeVersion,
        rowsMax: request.limit + 1,
      });
      if (rows.length === 0 && request.beforeVersion === undefined) {
        return { data: [setting.initial(deps, organizationId, deps.now())], hasMore: false };
      }
      return { data: rows.slice(0, request.limit), hasMore: rows.length > request.limit };
    },
  };
}

/** What a setting's writers need besides its reads: its writers' lock, its insert, and its 409 when stale. */
export interface SettingVersionWrites<T extends { version: number }>
  extends Pick<SettingVersions<T>, 'findCurrent' | 'initial'> {
  /** Serialises the setting's writers of one organization for the rest of the transaction. */
  lockWrites(db: Queryable, organizationId: string): Promise<void>;
  insertVersion(db: Queryable, version: T): Promise<void>;
  /** The 409 a change written against an older version answers with. */
  conflict: Parameters<typeof requireBaseVersion>[0];
  /** The process's copies the hot paths read (new transfers, quotes) instead of the database. */
  cache: OrganizationCache<T>;
}

/**
 * The current version inside the caller's transaction or through the process cache, and the current version
 * a change is written over.
 */
export function settingVersionWrites<T extends { version: number }>(setting: SettingVersionWrites<T>) {
  /** The current version, writing version 1 the first time an organization's setting is needed. */
  async function currentIn(tx: Queryable, deps: Deps, organizationId: string): Promise<T> {
    const current = await setting.findCurrent(tx, organizationId);
    if (current) return current;
    await setting.lockWrites(tx, organizationId);
    const again = await setting.findCurrent(tx, organizationId);
    if (again) return again;
    const initial = setting.initial(deps, organizationId, deps.now());
    await setting.insertVersion(tx, initial);
    return initial;
  }

  return {
    currentIn,

    /** The current version through the process cache, stored as version 1 the first time it is needed. */
    load(deps: Deps, organizationId: string): Promise<T> {
      return setting.cache.read(
        deps.store,
        organizationId,
        Date.now(),
        async () =>
          (await setting.findCurrent(deps.store, organizationId)) ??
          (await deps.store.transaction((tx) => currentIn(tx, deps, organizationId))),
      );
    },

    /** Drops the process's copy, so the next read loads the setting again. */
    forget(deps: Deps, organizationId: string): void {
      setting.cache.forget(deps.store, organizationId);
    },

    /**
     * The current version with the setting's writers locked out until the transaction ends, checked against
     * the change's `baseVersion` when it names one.
     */
    async currentForChange(
      tx: Queryable,
      deps: Deps,
      organizationId: string,
      baseVersion: number | undefined,
    ): Promise<T> {
      await setting.lockWrites(tx, organizationId);
      const current = await currentIn(tx, deps, organizationId);
      requireBaseVersion(setting.conflict, current.version, baseVersion);
      return current;
    },
  };
}
