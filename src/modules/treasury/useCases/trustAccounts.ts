/**
 * Trust accounts: the bank (or custodian) accounts an organization holds customer money in, configured by
 * admins, each change as evidence. Closing one takes the currency's trust account locks first, in the order
 * safeguarding.ts describes.
 */

import type { Deps } from '../../../app/deps.ts';
import { appendEvidence } from '../../../app/evidence.ts';
import { getById, listPage, requireById } from '../../../app/reads.ts';
import { dayOf, parseDay } from '../../../domain/days.ts';
import { AppError, invalidStateTransition, resourceMissing } from '../../../domain/errors.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import type { Currency } from '../../../domain/money.ts';
import type { Queryable } from '../../../store/store.ts';
import { checkTrustAccountType, type TrustAccount, type TrustAccountType } from '../domain/safeguarding.ts';
import {
  closeTrustAccount,
  findTrustAccount,
  insertTrustAccount,
  listTrustAccounts,
  lockTrustAccounts,
  type TrustAccountFilter,
} from '../repository/trustAccounts.ts';

export interface CreateTrustAccountInput {
  currency: Currency;
  type?: TrustAccountType | undefined;
  bank: string;
  account_reference: string;
  active_from?: string | undefined;
}

async function recordAccountChange(
  tx: Queryable,
  deps: Deps,
  account: TrustAccount,
  action: 'create' | 'close',
  actor: EvidenceActor,
): Promise<void> {
  await appendEvidence(tx, deps, [
    {
      organizationId: account.organizationId,
      kind: 'trust_account.update',
      actor,
      data: {
        action,
        trust_account_id: account.id,
        currency: account.currency,
        type: account.type,
        bank: account.bank,
        account_reference: account.accountReference,
        status: account.status,
        active_from: account.activeFrom,
        closed_on: account.closedOn,
      },
    },
  ]);
}

export async function createTrustAccount(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: CreateTrustAccountInput,
  actor: EvidenceActor,
): Promise<TrustAccount> {
  const now = deps.now();
  const account: TrustAccount = {
    id: deps.newId('trustAccount'),
    organizationId,
    currency: input.currency,
    type: checkTrustAccountType(input.type, input.currency),
    bank: input.bank,
    accountReference: input.account_reference,
    status: 'active',
    activeFrom: input.active_from === undefined ? dayOf(now) : parseDay(input.active_from, 'active_from'),
    closedOn: null,
    createdAt: now,
    updatedAt: now,
  };
  if (!(await insertTrustAccount(tx, account))) {
    throw new AppError({
      status: 409,
      code: 'trust_account_exists',
      title: 'Trust account already configured',
      detail: `An active trust account at ${account.bank} with reference ${account.accountReference} is configured already.`,
      param: 'account_reference',
    });
  }
  await recordAccountChange(tx, deps, account, 'create', actor);
  return account;
}

/** Closes a trust account: from today (UTC) its balance no longer counts; days before still need it. */
export async function closeTrustAccountFor(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  actor: EvidenceActor,
): Promise<TrustAccount> {
  const found = await requireTrustAccount(tx, organizationId, id);
  const current = (await lockTrustAccounts(tx, organizationId, found.currency)).find((a) => a.id === id);
  if (!current) throw resourceMissing('trust account', id);
  if (current.status === 'closed') {
    throw invalidStateTransition(
      'Trust account closed',
      `Trust account ${id} was closed on ${current.closedOn}; a closed account does not change.`,
      'status',
    );
  }
  const now = deps.now();
  const closed: TrustAccount = { ...current, status: 'closed', closedOn: dayOf(now), updatedAt: now };
  await closeTrustAccount(tx, closed);
  await recordAccountChange(tx, deps, closed, 'close', actor);
  return closed;
}

export const getTrustAccount = getById<TrustAccount>(findTrustAccount, 'trust account');

/** The trust account with this id, read on a transaction; 404 naming `param` when the organization has none. */
export const requireTrustAccount = requireById<TrustAccount>(findTrustAccount, 'trust account');

export const listOrganizationTrustAccounts = listPage<TrustAccountFilter, TrustAccount>(listTrustAccounts);
