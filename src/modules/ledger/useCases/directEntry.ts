/** An organization's own entry, not a transfer's: posted at once, as product work books it. */
import type { Deps } from '../../../app/deps.ts';
import type { Posting } from '../domain/ledger.ts';
import type { JournalEntry } from '../repository/ledger.ts';

/** A direct entry of the organization's, posted at once (interest, disbursement, repayment, write-off). */
export function directEntry(
  deps: Pick<Deps, 'newId'>,
  organizationId: string,
  postings: Posting[],
  now: Date,
): JournalEntry {
  return {
    id: deps.newId('journalEntry'),
    organizationId,
    transferId: null,
    kind: 'direct',
    holdEntryId: null,
    createdAt: now,
    postings,
  };
}
