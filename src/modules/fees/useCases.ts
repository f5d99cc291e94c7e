/**
 * Fee schedules as data: an organization's rules, versioned as a whole. Each change writes a new version
 * (transfers and conversions keep pointing at theirs) with its evidence and a `fee_schedule.updated` event. New transfers and quotes read the current version
 * through a short per-process cache, as the ledger writer reads the policy, so deciding a fee costs no
 * database round trip; the fee income account each fee is posted to is looked up once per process.
 */

import type { Deps } from '../../app/deps.ts';
import { newEvent, recordEvents } from '../../app/events.ts';
import { appendEvidence } from '../../app/evidence.ts';
import { organizationCache } from '../../app/organizationCache.ts';
import { keepNewest, mapForStore } from '../../app/processCaches.ts';
import { settingVersionReads, settingVersionWrites } from '../../app/settingVersions.ts';
import type { EventRecord } from '../../domain/events.ts';
import type { EvidenceActor } from '../../domain/evidence.ts';
import type { Currency } from '../../domain/money.ts';
import type { Queryable, Store } from '../../store/store.ts';
import { ensureSystemAccount } from '../ledger/index.ts';
import { type FeeSchedule, feeRuleJson, initialFeeSchedule, parseFeeRules } from './domain.ts';
import {
  findCurrentFeeSchedule,
  findFeeScheduleVersion,
  insertFeeScheduleVersion,
  listFeeScheduleVersions,
  lockFeeScheduleWrites,
} from './repository.ts';

/**
 * How long a process keeps an organization's fee schedule before reading it again: a change made through
 * another process applies within this bound (at once in the process that made it).
 */
export const FEE_SCHEDULE_CACHE_TTL_MS = 5_000;
/** Organizations whose fee schedule one process keeps at most. */
export const FEE_SCHEDULE_CACHE_ENTRIES_MAX = 10_000;
/** (Organization, currency) fee income account ids one process keeps at most. */
export const FEE_ACCOUNT_CACHE_ENTRIES_MAX = 10_000;
/**
 * The `rail` a fee income account is filed under: fees are the organization's own income, whatever rail
 * carried the transfer (the batch reserve is filed the same way).
 */
export const FEE_INCOME_ACCOUNT_RAIL = 'internal';

const accountCaches = new WeakMap<Store, Map<string, string>>();

/** The fee schedule as a setting kept in numbered versions: its reads, its writes, and its version 1. */
const feeScheduleSetting = {
  findCurrent: findCurrentFeeSchedule,
  findVersion: findFeeScheduleVersion,
  listVersions: listFeeScheduleVersions,
  lockWrites: lockFeeScheduleWrites,
  insertVersion: insertFeeScheduleVersion,
  initial: (_deps: Deps, organizationId: string, now: Date) => initialFeeSchedule(organizationId, now),
  what: 'fee schedule version',
  conflict: { setting: 'fee schedule', code: 'fee_schedule_version_conflict', title: 'Fee schedule changed' },
  cache: organizationCache<FeeSchedule>(FEE_SCHEDULE_CACHE_TTL_MS, FEE_SCHEDULE_CACHE_ENTRIES_MAX),
} as const;
const feeScheduleVersions = settingVersionReads(feeScheduleSetting);
const feeScheduleWrites = settingVersionWrites(feeScheduleSetting);

/**
 * The current version read in the caller's transaction (for a reader already inside one, such as a payment
 * batch's submit: the cached read would wait for it on the embedded database's one session), writing
 * version 1 (no rules) the first time an organization's schedule is needed.
 */
export const currentFeeScheduleIn = feeScheduleWrites.currentIn;

/**
 * The organization's current fee schedule, through the process cache: what new transfers and quotes are
 * decided by. Version 1 is stored the first time, so every transfer's version can be read back.
 */
export const loadFeeSchedule = feeScheduleWrites.load;

/** Drops the process's copy, so the next transfer reads the schedule again. */
export const forgetFeeSchedule = feeScheduleWrites.forget;

/** The organization's fee income account in a currency, created on first use; its id is kept per process. */
export async function feeIncomeAccount(
  deps: Deps,
  db: Queryable,
  organizationId: string,
  currency: Currency,
): Promise<string> {
  const cache = mapForStore(accountCaches, deps.store);
  const key = `${organizationId}\u0000${currency}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const id = await ensureSystemAccount(db, {
    id: deps.newId('ledgerAccount'),
    organizationId,
    kind: 'fee_income',
    rail: FEE_INCOME_ACCOUNT_RAIL,
    currency,
    now: deps.now(),
  });
  // Created inside a transaction that may still roll back: only a committed account may be remembered.
  if (db === deps.store) keepNewest(cache, key, id, FEE_ACCOUNT_CACHE_ENTRIES_MAX);
  return id;
}

export const getCurrentFeeSchedule = feeScheduleVersions.getCurrent;
export const getFeeScheduleVersion = feeScheduleVersions.getVersion;
export const listVersions = feeScheduleVersions.listVersions;

export interface FeeScheduleUpdateInput {
  rules?: unknown;
  /** The version the change was written against; a newer current version is a 409. */
  base_version?: number | undefined;
}

/** The `fee_schedule.updated` event of a stored version: its number, the one it replaced, and its rules. */
export function feeScheduleEvent(deps: Deps, schedule: FeeSchedule, previousVersion: number): EventRecord {
  return newEvent(
    deps,
    {
      organizationId: schedule.organizationId,
      type: 'fee_schedule.updated',
      resourceId: null,
      data: {
        version: schedule.version,
        previous_version: previousVersion,
        rules: schedule.rules.length,
        created_by: schedule.createdBy,
      },
    },
    schedule.createdAt,
  );
}

/** Replaces the organization's fee rules with a new version, recorded as evidence and announced as an event. */
export async function updateFeeSchedule(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: FeeScheduleUpdateInput,
  createdBy: string,
  actor: EvidenceActor,
): Promise<FeeSchedule> {
  const rules = parseFeeRules(input.rules);
  const current = await feeScheduleWrites.currentForChange(tx, deps, organizationId, input.base_version);
  const schedule: FeeSchedule = {
    organizationId,
    version: current.version + 1,
    rules,
    createdBy,
    createdAt: deps.now(),
  };
  await insertFeeScheduleVersion(tx, schedule);
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'fee_schedule.update',
      actor,
      data: {
        version: schedule.version,
        previous_version: current.version,
        rules: schedule.rules.map(feeRuleJson) as never,
      },
    },
  ]);
  await recordEvents(tx, deps, [feeScheduleEvent(deps, schedule, current.version)]);
  forgetFeeSchedule(deps, organizationId);
  return schedule;
}
