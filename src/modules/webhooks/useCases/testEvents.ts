/**
 * Test events (sandbox `POST /v1/sandbox/events`, `mkoba trigger`): an event of any known type with a sample
 * payload, written to the outbox and delivered like any other. Each type's sample comes from its builder in
 * `SAMPLE_BUILDERS`, over a sample transfer and wallet every builder may show.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvent } from '../../../app/events.ts';
import type { Approval } from '../../../domain/approvals.ts';
import {
  AML_ALERT_EVENT_TYPES,
  type EventRecord,
  type EventType,
  LOAN_EVENT_TYPES,
  PAYMENT_BATCH_EVENT_TYPES,
  TRANSFER_EVENT_TYPES,
  transferEventData,
  WALLET_EVENT_TYPES,
  walletEventData,
} from '../../../domain/events.ts';
import { newTransferLife, type Transfer } from '../../../domain/transferRecord.ts';
import type { Wallet } from '../../../domain/wallets.ts';
import type { Queryable } from '../../../store/store.ts';
import { approvalEventData } from '../../authorization/index.ts';

/** A sample payload for a test event of any known type (sandbox `POST /v1/sandbox/events`, `mkoba trigger`). */
export async function emitTestEvent(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  type: EventType,
): Promise<EventRecord> {
  const now = deps.now();
  const transfer = sampleTransfer(deps, organizationId, type, now);
  const wallet = sampleWallet(deps, organizationId, type, now);
  const build = SAMPLE_BUILDERS[type] ?? subscriptionDisabledSample;
  const data = build({ deps, type, now, transfer, wallet });
  return recordEvent(tx, deps, now, {
    organizationId,
    type,
    resourceId: null,
    data,
  });
}

/** What a sample payload is built from: the event's type and time, and the sample transfer and wallet. */
interface SampleContext {
  deps: Deps;
  type: EventType;
  now: Date;
  transfer: Transfer;
  wallet: Wallet;
}

/** Builds one event type's sample payload. */
type SampleBuilder = (sample: SampleContext) => Record<string, unknown>;

/** The state a sample transfer shows, by event; the others show a transfer processing. */
const TRANSFER_SAMPLE_STATE: Readonly<
  Partial<Record<EventType, Pick<Transfer, 'status' | 'failureCode' | 'ledgerState'>>>
> = {
  'transfer.settled': { status: 'settled', failureCode: null, ledgerState: 'posted' },
  'transfer.failed': { status: 'failed', failureCode: 'recipient_not_registered', ledgerState: 'voided' },
};

/** A sample M-Pesa payout of 1,500 KES, settled or failed for those events, processing for every other. */
function sampleTransfer(deps: Deps, organizationId: string, type: EventType, now: Date): Transfer {
  const { status, failureCode, ledgerState } = TRANSFER_SAMPLE_STATE[type] ?? {
    status: 'processing',
    failureCode: null,
    ledgerState: 'pending',
  };
  return {
    id: deps.newId('transfer'),
    organizationId,
    direction: 'outbound',
    sourceWalletId: deps.newId('wallet'),
    destination: { type: 'mobile_money', network: 'mpesa', phone: '+254700000000' },
    destinationWalletId: null,
    amountMinor: 150_000n,
    currency: 'KES',
    rail: 'mobile_money',
    network: 'mpesa',
    status,
    statusReason: null,
    failureCode,
    ledgerState,
    metadata: { test_event: 'true' },
    ...newTransferLife(now),
    processingAt: now,
  };
}

/** The status a sample wallet shows, with its reason, by event; the others show an active wallet. */
const WALLET_SAMPLE_STATUS: Readonly<Partial<Record<EventType, Pick<Wallet, 'status' | 'statusReason'>>>> = {
  'wallet.frozen': { status: 'frozen', statusReason: 'compliance_review' },
  'wallet.closed': { status: 'closed', statusReason: 'customer_request' },
};

/** A sample KES wallet with a new owner, frozen or closed for those events, active for every other. */
function sampleWallet(deps: Deps, organizationId: string, type: EventType, now: Date): Wallet {
  const { status, statusReason } = WALLET_SAMPLE_STATUS[type] ?? {
    status: 'active',
    statusReason: 'review_cleared',
  };
  return {
    id: deps.newId('wallet'),
    organizationId,
    ownerId: deps.newId('customer'),
    currency: 'KES',
    status,
    statusReason,
    statusChangedAt: now,
    availableMinor: 0n,
    pendingMinor: 0n,
    currentMinor: 0n,
    metadata: {},
    accountDetails: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** The same builder for each of these types. */
function eachOf(
  types: readonly EventType[],
  build: SampleBuilder,
): Partial<Record<EventType, SampleBuilder>> {
  return Object.fromEntries(types.map((type) => [type, build]));
}

/** The status a sample loan event shows; the others show an active loan. */
const LOAN_SAMPLE_STATUS: Readonly<Record<string, string>> = {
  'loan.applied': 'approved',
  'loan.approved': 'approved',
  'loan.rejected': 'rejected',
  'loan.canceled': 'canceled',
  'loan.paid_off': 'paid_off',
  'loan.written_off': 'written_off',
};

/** An approved approval of a sample transfer, for `approval.updated` test events. */
function sampleApproval(deps: Deps, transferId: string, now: Date): Approval {
  return {
    id: deps.newId('approval'),
    organizationId: 'org_sample',
    resourceType: 'transfer',
    resourceId: transferId,
    status: 'approved',
    policyVersion: 2,
    rule: 'large_payouts',
    quorum: 1,
    roles: ['approver'],
    distinctRoles: false,
    initiatedBy: deps.newId('member'),
    expiresAt: new Date(now.getTime() + 24 * 3_600_000),
    createdAt: now,
    decidedAt: now,
    votes: [
      {
        memberId: deps.newId('member'),
        email: 'approver@example.com',
        role: 'approver',
        decision: 'approve',
        comment: null,
        apiKeyId: deps.newId('apiKey'),
        createdAt: now,
      },
    ],
  };
}

/** What a type with no builder of its own shows: a subscription disabled for failing too long. */
const subscriptionDisabledSample: SampleBuilder = ({ deps }) => ({
  subscription_id: deps.newId('webhookSubscription'),
  reason: 'failing_too_long',
  test_event: true,
});

/** Each event type's sample payload, by type; a type not listed shows `subscriptionDisabledSample`. */
const SAMPLE_BUILDERS: Readonly<Partial<Record<EventType, SampleBuilder>>> = {
  ...eachOf(TRANSFER_EVENT_TYPES, ({ transfer }) => transferEventData(transfer)),
  ...eachOf(WALLET_EVENT_TYPES, ({ type, wallet }) => ({
    ...walletEventData(wallet),
    ...(type === 'wallet.updated' ? { changed: ['metadata'], metadata: { crm_id: 'C-1' } } : {}),
    test_event: true,
  })),
  'customer.updated': ({ wallet }) => ({
    customer_id: wallet.ownerId,
    type: 'individual',
    changed: ['email'],
    kyc_status: 'verified',
    previous_kyc_status: 'verified',
    verification_required_for: [],
    tier: 1,
    test_event: true,
  }),
  'customer.verification.updated': ({ deps, wallet }) => ({
    verification_id: deps.newId('verification'),
    customer_id: wallet.ownerId,
    status: 'verified',
    reason: null,
    kyc_status: 'verified',
    tier: 1,
    test_event: true,
  }),
  ...eachOf(AML_ALERT_EVENT_TYPES, ({ deps, type, transfer, wallet }) => ({
    alert_id: deps.newId('amlAlert'),
    status: type === 'aml.alert.resolved' ? 'resolved' : 'open',
    rule_id: deps.newId('amlRule'),
    rule_type: 'velocity',
    action: 'alert',
    transfer_id: transfer.id,
    conversion_quote_id: null,
    wallet_id: transfer.sourceWalletId,
    customer_id: wallet.ownerId,
    disposition: type === 'aml.alert.resolved' ? 'false_positive' : null,
    test_event: true,
  })),
  ...eachOf(PAYMENT_BATCH_EVENT_TYPES, ({ deps, type, transfer }) => ({
    payment_batch_id: deps.newId('paymentBatch'),
    reference: 'payroll-sample',
    status: type === 'payment_batch.created' ? 'validating' : type.slice('payment_batch.'.length),
    failure_code: null,
    source: transfer.sourceWalletId,
    currency: transfer.currency,
    total: '1500.00',
    items: 3,
    succeeded: 0,
    failed: 0,
    canceled: 0,
    approval: null,
    test_event: true,
  })),
  ...eachOf(
    ['reconciliation.exception.opened', 'reconciliation.exception.resolved'],
    ({ deps, type, transfer }) => ({
      exception_id: deps.newId('reconciliationException'),
      kind: 'amount_mismatch',
      status: type.endsWith('resolved') ? 'resolved' : 'open',
      transfer_id: transfer.id,
      statement_id: deps.newId('statement'),
      line: 1,
      resolution: type.endsWith('resolved') ? 'write_off' : null,
      test_event: true,
    }),
  ),
  'reconciliation.statement.imported': ({ deps, now }) => ({
    statement_id: deps.newId('statement'),
    rail: 'mobile_money',
    from: now.toISOString().slice(0, 10),
    to: now.toISOString().slice(0, 10),
    lines: 3,
    matched: 2,
    exceptions: 1,
    test_event: true,
  }),
  ...eachOf(['export.ready', 'export.failed'], ({ deps, type }) => ({
    export_id: deps.newId('export'),
    type: 'transfers',
    format: 'csv',
    status: type === 'export.ready' ? 'ready' : 'failed',
    rows: 3,
    bytes: 512,
    sha256: '0'.repeat(64),
    expires_at: null,
    test_event: true,
  })),
  'ledger.matched': ({ transfer }) => ({
    transfer_id: transfer.id,
    ledger_state: 'matched',
    rail: 'mobile_money',
    test_event: true,
  }),
  'approval.updated': ({ deps, transfer, now }) => ({
    ...approvalEventData(sampleApproval(deps, transfer.id, now)),
    test_event: true,
  }),
  'policy.updated': () => ({
    version: 2,
    rules: 1,
    created_by: 'system',
    approval_id: null,
    test_event: true,
  }),
  'fee_schedule.updated': () => ({
    version: 2,
    previous_version: 1,
    rules: 1,
    created_by: 'system',
    test_event: true,
  }),
  'launch_gate.updated': ({ deps, now }) => ({
    product: 'mobile_money',
    gate: 'contacts_named',
    state: 'passed',
    previous_state: 'open',
    evidence: {
      contacts: {
        technical: 'tech@example.com',
        compliance: 'compliance@example.com',
        finance: 'finance@example.com',
      },
    },
    evidence_record: deps.newId('evidence'),
    updated_at: now.toISOString(),
    test_event: true,
  }),
  ...eachOf(LOAN_EVENT_TYPES, ({ deps, type, wallet }) => ({
    loan_id: deps.newId('loan'),
    status: LOAN_SAMPLE_STATUS[type] ?? 'active',
    status_reason: null,
    product: deps.newId('loanProduct'),
    customer: wallet.ownerId,
    wallet: wallet.id,
    principal: '12000.00',
    currency: 'KES',
    principal_outstanding: '12000.00',
    total_outstanding: '13520.00',
    days_past_due: type === 'loan.overdue' ? 1 : 0,
    arrears_bucket: type === 'loan.overdue' ? 'dpd_1_30' : 'current',
    test_event: true,
  })),
};
