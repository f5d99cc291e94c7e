/**
 * The simulator's Transfers API: POST /v3/transfers (a bank or mobile-money payout, refused for a reference
 * already used), GET /v3/transfers/{id}, GET /v3/transfers (filtered by `reference` and `status`), and how
 * a NEW transfer moves to SUCCESSFUL, FAILED or stays PENDING, reported once by `transfer.completed`.
 */

import { schedule } from '../shared.ts';
import { accountOf, bankNameOf, type FlutterwaveAccountBehaviour } from './accounts.ts';
import { isMobileMoneyOperator, mobileMoneyRefusal, walletBehaviour } from './mobileMoney.ts';
import {
  type Answer,
  type FlutterwaveState,
  type FlutterwaveTransfer,
  failure,
  nextId,
  type StoredTransfer,
  success,
  timestamp,
} from './state.ts';
import { sendWebhook } from './webhooks.ts';

/** Flutterwave's limits on the free-text fields (the official client's schema says the same). */
const NARRATION_MAX_CHARS = 100;
const REFERENCE_MAX_CHARS = 100;
const CURRENCY_PATTERN = /^[A-Z]{3}$/;

type Fields = Record<string, unknown>;

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;

/** A positive amount in major units: a JSON number, or a decimal string (Flutterwave accepts both). */
export function positiveAmount(value: unknown): number | undefined {
  const amount = typeof value === 'string' && /^\d+(\.\d{1,2})?$/.test(value) ? Number(value) : value;
  return typeof amount === 'number' && Number.isFinite(amount) && amount > 0 ? amount : undefined;
}

/** POST /v3/transfers. */
export function createTransfer(state: FlutterwaveState, fields: Fields): Answer {
  const amount = positiveAmount(fields.amount);
  if (amount === undefined) return failure(400, 'amount is required and must be a positive number');
  const currency = text(fields.currency);
  if (currency === undefined || !CURRENCY_PATTERN.test(currency)) return failure(400, 'currency is required');
  const accountBank = text(fields.account_bank);
  if (accountBank === undefined) return failure(400, 'account_bank is required');
  const accountNumber = text(fields.account_number);
  if (accountNumber === undefined) return failure(400, 'account_number is required');
  const narration = fields.narration === undefined ? '' : text(fields.narration);
  if (narration === undefined || narration.length > NARRATION_MAX_CHARS) {
    return failure(400, `narration must be a string of at most ${NARRATION_MAX_CHARS} characters`);
  }
  const given = fields.reference === undefined ? undefined : text(fields.reference);
  if (fields.reference !== undefined && (given === undefined || given.length > REFERENCE_MAX_CHARS)) {
    return failure(400, `reference must be a string of at most ${REFERENCE_MAX_CHARS} characters`);
  }
  if (given !== undefined && transfersWith(state, { reference: given }).length > 0) {
    return failure(400, 'Transfer with this reference already exists');
  }
  const mobile = isMobileMoneyOperator(accountBank);
  const refusal = mobile ? mobileMoneyRefusal(fields, accountBank, currency, accountNumber) : undefined;
  if (refusal !== undefined) return failure(400, refusal);
  const account = mobile ? undefined : accountOf(accountNumber);
  const id = nextId(state);
  const transfer: FlutterwaveTransfer = {
    id,
    account_number: accountNumber,
    bank_code: accountBank,
    full_name: text(fields.beneficiary_name) ?? account?.accountName ?? 'N/A',
    created_at: timestamp(),
    currency,
    debit_currency: text(fields.debit_currency) ?? currency,
    amount,
    fee: 0,
    status: 'NEW',
    reference: given ?? `simulated-${id}`,
    meta: fields.meta ?? null,
    narration,
    complete_message: '',
    requires_approval: 0,
    is_approved: 1,
    bank_name: mobile ? accountBank : bankNameOf(accountBank),
  };
  const stored: StoredTransfer = {
    transfer,
    webhookUrl: text(fields.callback_url) ?? state.config.webhookUrl,
  };
  state.transfers.set(id, stored);
  advance(state, stored, mobile ? walletBehaviour(accountNumber) : account?.behaviour);
  return success('Transfer Queued Successfully', structuredClone(transfer));
}

/** Moves a NEW transfer to PENDING at once, then to its final status as its account or wallet says. */
function advance(
  state: FlutterwaveState,
  stored: StoredTransfer,
  behaviour: FlutterwaveAccountBehaviour = {
    kind: 'fail',
    completeMessage: 'DISBURSE FAILED: Invalid account number',
  },
): void {
  const { transfer } = stored;
  schedule(state, 0, () => {
    transfer.status = 'PENDING';
  });
  if (behaviour.kind === 'stay_pending') return;
  schedule(state, state.config.processingMs, async () => {
    if (behaviour.kind === 'fail') {
      transfer.status = 'FAILED';
      transfer.complete_message = behaviour.completeMessage;
    } else {
      transfer.status = 'SUCCESSFUL';
      transfer.complete_message = 'Transaction was successful';
    }
    await sendWebhook(state, transferCompleted(stored));
  });
}

/** The `transfer.completed` webhook of a final transfer, as Flutterwave's sample shows it. */
export function transferCompleted(stored: StoredTransfer) {
  const { full_name, ...rest } = stored.transfer;
  return {
    event: 'transfer.completed' as const,
    id: stored.transfer.id,
    url: stored.webhookUrl,
    payload: {
      event: 'transfer.completed',
      'event.type': 'Transfer',
      data: { ...rest, fullname: full_name, approver: null },
    },
  };
}

/** GET /v3/transfers/{id}. */
export function readTransfer(state: FlutterwaveState, idText: string): Answer {
  const stored = /^\d+$/.test(idText) ? state.transfers.get(Number(idText)) : undefined;
  if (stored === undefined) return failure(404, 'No transfer found');
  return success('Transfer fetched', structuredClone(stored.transfer));
}

function transfersWith(state: FlutterwaveState, filter: { reference?: string; status?: string }) {
  return [...state.transfers.values()]
    .map((stored) => stored.transfer)
    .filter(
      (transfer) =>
        (filter.reference === undefined || transfer.reference === filter.reference) &&
        (filter.status === undefined || transfer.status === filter.status.toUpperCase()),
    );
}

/** GET /v3/transfers: newest first, one page (the simulator never holds more than a page's worth in tests). */
export function listTransfers(state: FlutterwaveState, query: URLSearchParams): Answer {
  const found = transfersWith(state, {
    reference: query.get('reference') ?? undefined,
    status: query.get('status') ?? undefined,
  }).reverse();
  return {
    status: 200,
    body: {
      status: 'success',
      message: 'Transfers fetched',
      meta: { page_info: { total: found.length, current_page: 1, total_pages: found.length === 0 ? 0 : 1 } },
      data: structuredClone(found),
    },
  };
}
