/** The facts a printed receipt shows, labelled and in order: the HTML page and the PDF print the same rows. */
import type { receiptFields } from '../domain.ts';

/** Each row's label and value (null: nothing to show, printed as a dash). */
export function receiptRows(f: ReturnType<typeof receiptFields>): [string, string | null][] {
  return [
    ['Amount', `${f.amount} ${f.currency}`],
    ['Fee', `${f.fee} ${f.currency}`],
    ['Total debited', `${f.total} ${f.currency}`],
    ['Status', f.status],
    ['Settled', f.settled_at],
    ['From wallet', f.source],
    ['To', f.destination],
    ['Rail', f.rail],
    ['Rail reference', f.rail_reference],
    ['Transfer', f.transfer],
    ['Journal entry', f.journal_entry],
    ['Issued', f.issued_at],
  ];
}
