/**
 * How each export type is written: JSON lines carry each record's API wire form (the same presenters as the
 * routes), CSV a flat row per record (a ledger entry: a row per posting). Handed to the export worker by the
 * composition root, so the worker writes what the API shows.
 */

import type { Environment } from '../../../domain/access.ts';
import type { EventRecord } from '../../../domain/events.ts';
import type { EvidenceRecord } from '../../../domain/evidence.ts';
import { formatAmount } from '../../../domain/money.ts';
import { feeOf, type Transfer } from '../../../domain/transferRecord.ts';
import { presentEvent, presentJournalEntry, presentTransfer } from '../../../http/presenters.ts';
import { presentEvidence } from '../../../http/routes/evidence.ts';
import type { JournalEntry } from '../../ledger/index.ts';
import type { ReconciliationException } from '../../treasury/index.ts';
import { presentException } from '../../treasury/index.ts';
import type { ExportFormatter, ExportFormatters } from '../useCases/sources.ts';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The payee's name as the integrator gave it, where the destination has one. */
function destinationName(destination: Transfer['destination']): string | null {
  if (destination.type === 'mobile_money') return destination.name ?? null;
  if (destination.type === 'bank_account') return destination.account_name ?? null;
  return null;
}

/** A transfer a row, its destination and metadata as JSON. */
const transferFormat: ExportFormatter = {
  csvHeader: [
    'id',
    'created_at',
    'direction',
    'status',
    'source',
    'destination_type',
    'destination_name',
    'destination',
    'amount',
    'currency',
    'rail',
    'rail_reference',
    'ledger_state',
    'failure_code',
    'settled_at',
    'created_by',
    'metadata',
    'fee',
  ],
  csvRows: (record) => {
    const t = record as Transfer;
    return [
      [
        t.id,
        t.createdAt.toISOString(),
        t.direction,
        t.status,
        t.sourceWalletId,
        t.destination.type,
        destinationName(t.destination),
        JSON.stringify(t.destination),
        formatAmount(t.amountMinor, t.currency),
        t.currency,
        t.rail,
        t.railReference,
        t.ledgerState,
        t.failureCode,
        iso(t.settledAt),
        t.createdBy,
        JSON.stringify(t.metadata),
        formatAmount(feeOf(t), t.currency),
      ],
    ];
  },
  json: (record) => presentTransfer(record as Transfer),
};

/** A ledger entry a row per posting. */
const ledgerEntryFormat: ExportFormatter = {
  csvHeader: [
    'entry',
    'created_at',
    'kind',
    'transfer',
    'hold_entry',
    'account',
    'side',
    'phase',
    'amount',
    'currency',
  ],
  csvRows: (record) => {
    const e = record as JournalEntry;
    return e.postings.map((p) => [
      e.id,
      e.createdAt.toISOString(),
      e.kind,
      e.transferId,
      e.holdEntryId,
      p.accountId,
      p.side,
      p.phase,
      formatAmount(p.amountMinor, p.currency),
      p.currency,
    ]);
  },
  json: (record) => presentJournalEntry(record as JournalEntry),
};

/** An event a row, its data as JSON. */
function eventFormat(environment: Environment): ExportFormatter {
  return {
    csvHeader: ['id', 'created_at', 'type', 'resource', 'data'],
    csvRows: (record) => {
      const e = record as EventRecord;
      return [[e.id, e.createdAt.toISOString(), e.type, e.resourceId, JSON.stringify(e.data)]];
    },
    json: (record) => presentEvent(record as EventRecord, environment),
  };
}

/** An evidence record a row. */
const evidenceFormat: ExportFormatter = {
  csvHeader: [
    'id',
    'sequence',
    'created_at',
    'kind',
    'transfer',
    'customer',
    'wallet',
    'previous_hash',
    'hash',
    'payload',
  ],
  csvRows: (record) => {
    const r = record as EvidenceRecord;
    return [
      [
        r.id,
        String(r.sequence),
        r.createdAt.toISOString(),
        r.kind,
        r.transferId,
        r.customerId,
        r.walletId,
        r.previousHash,
        r.hash,
        r.payload,
      ],
    ];
  },
  json: (record) => presentEvidence(record as EvidenceRecord),
};

/** A reconciliation exception a row, its details as JSON. */
const reconciliationExceptionFormat: ExportFormatter = {
  csvHeader: [
    'id',
    'created_at',
    'kind',
    'status',
    'transfer',
    'statement',
    'line',
    'details',
    'resolution',
    'note',
    'resolved_by',
    'journal_entry',
    'resolved_at',
  ],
  csvRows: (record) => {
    const e = record as ReconciliationException;
    return [
      [
        e.id,
        e.createdAt.toISOString(),
        e.kind,
        e.status,
        e.transferId,
        e.statementId,
        e.line === null ? null : String(e.line),
        JSON.stringify(e.details),
        e.resolution,
        e.note,
        e.resolvedBy,
        e.journalEntryId,
        iso(e.resolvedAt),
      ],
    ];
  },
  json: (record) => presentException(record as ReconciliationException),
};

export function exportFormatters(environment: Environment): ExportFormatters {
  return {
    transfers: transferFormat,
    ledger_entries: ledgerEntryFormat,
    events: eventFormat(environment),
    evidence: evidenceFormat,
    reconciliation_exceptions: reconciliationExceptionFormat,
  };
}
