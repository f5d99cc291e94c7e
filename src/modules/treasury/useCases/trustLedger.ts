/**
 * The trust ledger: the organization's `trust` ledger account per currency (customer money held at trust
 * banks, or for USDC and USDT at a custodian), and the sweeps operators record between a rail partner's float
 * and it. Bank and on-chain deposits reach it through `creditFromRail` (src/modules/transfers/useCases/railCredits.ts); a sweep is one
 * balanced entry through the posting module, with its record, evidence and event in the same transaction.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvent } from '../../../app/events.ts';
import { appendEvidence } from '../../../app/evidence.ts';
import { getById, listPage } from '../../../app/reads.ts';
import { dayOf, parseDay } from '../../../domain/days.ts';
import { AppError, validationError } from '../../../domain/errors.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import { type Currency, checkSingleAmount, formatAmount, parseAmount } from '../../../domain/money.ts';
import type { Queryable } from '../../../store/store.ts';
import {
  directEntry,
  ensureSystemAccount,
  PostingSession,
  refusalError,
  trustLedgerAccount,
} from '../../ledger/index.ts';
import { countsOn } from '../domain/safeguarding.ts';
import {
  checkSweepRail,
  type SafeguardingSweep,
  type SweepDirection,
  type SweepRail,
  sweepPostings,
} from '../domain/trustLedger.ts';
import {
  findSweep,
  findSweepByReference,
  insertSweep,
  listSweeps,
  type SweepFilter,
} from '../repository/safeguardingSweeps.ts';
import { requireTrustAccount } from './trustAccounts.ts';

export interface RecordSweepInput {
  currency: Currency;
  rail: SweepRail;
  direction: SweepDirection;
  amount: string;
  reference: string;
  value_date: string;
  trust_account?: string | undefined;
}

/** The `data` of a `safeguarding.sweep.recorded` event, and the sweep's wire form less its envelope. */
export function sweepEventData(s: SafeguardingSweep): Record<string, unknown> {
  return {
    sweep_id: s.id,
    currency: s.currency,
    rail: s.rail,
    direction: s.direction,
    amount: formatAmount(s.amountMinor, s.currency),
    reference: s.reference,
    value_date: s.valueDate,
    trust_account: s.trustAccountId,
    journal_entry: s.journalEntryId,
  };
}

/** A sweep's figures before it is posted and recorded. */
type SweepDraft = Omit<SafeguardingSweep, 'id' | 'journalEntryId' | 'createdBy' | 'createdAt'>;

/** The same movement recorded again: every figure equal. */
function sameSweep(a: SafeguardingSweep, b: SweepDraft) {
  return (
    a.direction === b.direction &&
    a.amountMinor === b.amountMinor &&
    a.valueDate === b.valueDate &&
    a.trustAccountId === b.trustAccountId
  );
}

/** A sweep's figures, checked: its rail for its currency, a single amount, a reference, a value date. */
function checkSweepFigures(input: RecordSweepInput): {
  amountMinor: bigint;
  reference: string;
  valueDate: string;
} {
  const { currency, rail } = input;
  checkSweepRail(rail, currency);
  const amountMinor = checkSingleAmount(parseAmount(input.amount, currency, 'amount'), currency);
  const reference = input.reference.trim();
  if (reference === '') throw validationError('reference', 'reference must not be blank', 'invalid_value');
  const valueDate = parseDay(input.value_date, 'value_date');
  return { amountMinor, reference, valueDate };
}

/** The trust account a sweep names, if any: one of the organization's, in its currency, counting that day. */
async function sweptTrustAccountId(
  tx: Queryable,
  organizationId: string,
  trustAccount: string | undefined,
  currency: Currency,
  valueDate: string,
): Promise<string | null> {
  if (trustAccount === undefined) return null;
  const account = await requireTrustAccount(tx, organizationId, trustAccount, 'trust_account');
  if (account.currency !== currency) {
    throw validationError(
      'trust_account',
      `trust account ${account.id} holds ${account.currency}, the sweep is in ${currency}`,
      'invalid_value',
    );
  }
  if (!countsOn(account, valueDate)) {
    throw validationError(
      'value_date',
      `trust account ${account.id} holds safeguarded money from ${account.activeFrom}${account.closedOn ? ` until before ${account.closedOn}` : ''}, so no sweep moved money through it on ${valueDate}`,
      'out_of_range',
    );
  }
  return account.id;
}

/** The sweep recorded before with this reference when its figures are the same; a 409 when they differ. */
async function sweepRecordedBefore(tx: Queryable, draft: SweepDraft): Promise<SafeguardingSweep | undefined> {
  const { organizationId, rail, currency, reference } = draft;
  const existing = await findSweepByReference(tx, organizationId, rail, currency, reference);
  if (!existing || sameSweep(existing, draft)) return existing;
  throw new AppError({
    status: 409,
    code: 'duplicate_reference',
    title: 'Sweep reference used',
    detail: `Sweep ${existing.id} was recorded with reference '${reference}' on ${rail} in ${currency}, for ${formatAmount(existing.amountMinor, currency)} ${existing.direction} on ${existing.valueDate}; a movement is recorded once.`,
    param: 'reference',
  });
}

/** The sweep's balanced entry between the trust and settlement accounts, posted in the locked session. */
async function postSweep(
  session: PostingSession,
  deps: Deps,
  draft: SweepDraft,
  accounts: { trust: string; settlement: string },
  now: Date,
): Promise<string> {
  const entry = directEntry(
    deps,
    draft.organizationId,
    sweepPostings(draft.direction, accounts.trust, accounts.settlement, draft.amountMinor, draft.currency),
    now,
  );
  const refusal = session.tryPost(entry);
  if (refusal) throw refusalError(refusal, 'sweep', 'amount');
  await session.flush(now);
  return entry.id;
}

/** The sweep's evidence, naming the ledger accounts it moved money between, and its event. */
async function recordSweepEvidenceAndEvent(
  tx: Queryable,
  deps: Deps,
  sweep: SafeguardingSweep,
  accounts: { trust: string; settlement: string },
  actor: EvidenceActor,
): Promise<void> {
  const { organizationId, createdAt: now } = sweep;
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'safeguarding.sweep',
      actor,
      data: {
        sweep_id: sweep.id,
        currency: sweep.currency,
        rail: sweep.rail,
        direction: sweep.direction,
        amount_minor: sweep.amountMinor.toString(),
        reference: sweep.reference,
        value_date: sweep.valueDate,
        trust_account_id: sweep.trustAccountId,
        journal_entry_id: sweep.journalEntryId,
        trust_ledger_account: accounts.trust,
        settlement_account: accounts.settlement,
      },
    },
  ]);
  await recordEvent(tx, deps, now, {
    organizationId,
    type: 'safeguarding.sweep.recorded',
    resourceId: sweep.id,
    data: sweepEventData(sweep),
  });
}

/**
 * Records a sweep and posts it, in the caller's transaction: `to_trust` debits the trust account and credits
 * the rail's settlement account (the partner's float), `from_trust` the reverse. No floor applies to either
 * account: the money has moved at the banks, and the ledger records what happened. The reference is the
 * movement's identity: recorded again with the same figures it is the same sweep (`created` false); with
 * other figures a 409. Both accounts are locked before the reference is looked up, so two requests with one
 * reference (same rail and currency, so the same accounts) are taken one after the other and post once.
 * `alsoLock`: accounts the caller posts to after the sweep in the same transaction (a custody sweep's network
 * fee), locked with the sweep's own in one statement, since the sweep's evidence takes the chain head
 * (src/store/lockOrder.ts).
 */
export async function recordSweep(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: RecordSweepInput,
  actor: EvidenceActor,
  createdBy: string,
  alsoLock: readonly string[] = [],
): Promise<{ sweep: SafeguardingSweep; created: boolean }> {
  const { currency, rail, direction } = input;
  const { amountMinor, reference, valueDate } = checkSweepFigures(input);
  const now = deps.now();
  if (valueDate > dayOf(now)) {
    throw validationError(
      'value_date',
      `value_date must be today (${dayOf(now)}, UTC) or earlier`,
      'out_of_range',
    );
  }
  const trustAccountId = await sweptTrustAccountId(
    tx,
    organizationId,
    input.trust_account,
    currency,
    valueDate,
  );

  const trust = await trustLedgerAccount(tx, deps, organizationId, currency);
  const settlement = await ensureSystemAccount(tx, {
    id: deps.newId('ledgerAccount'),
    organizationId,
    kind: 'rail_settlement',
    rail,
    currency,
    now,
  });
  const session = new PostingSession(tx);
  await session.lock([trust, settlement, ...alsoLock]);
  const draft: SweepDraft = {
    organizationId,
    currency,
    rail,
    direction,
    amountMinor,
    reference,
    valueDate,
    trustAccountId,
  };
  const existing = await sweepRecordedBefore(tx, draft);
  if (existing) return { sweep: existing, created: false };
  const journalEntryId = await postSweep(session, deps, draft, { trust, settlement }, now);
  const sweep: SafeguardingSweep = {
    id: deps.newId('safeguardingSweep'),
    ...draft,
    journalEntryId,
    createdBy,
    createdAt: now,
  };
  await insertSweep(tx, sweep);
  await recordSweepEvidenceAndEvent(tx, deps, sweep, { trust, settlement }, actor);
  return { sweep, created: true };
}

export const getSweep = getById<SafeguardingSweep>(findSweep, 'safeguarding sweep');

export const listOrganizationSweeps = listPage<SweepFilter, SafeguardingSweep>(listSweeps);
