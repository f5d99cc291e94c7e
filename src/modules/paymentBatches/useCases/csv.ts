/** An uploaded batch's CSV rows as the JSON items they stand for. */
import { validationError } from '../../../domain/errors.ts';
import { itemOfCsvRow, PAYMENT_BATCH_ITEMS_MAX } from '../domain.ts';

/** Columns an uploaded batch must have. */
const REQUIRED_COLUMNS = ['reference', 'amount'] as const;

export function itemsOfCsvRows(rows: Record<string, string>[]): Record<string, unknown>[] {
  const header = rows[0] ? Object.keys(rows[0]) : [];
  for (const column of REQUIRED_COLUMNS) {
    if (rows.length > 0 && !header.includes(column)) {
      throw validationError('body', `The CSV needs a '${column}' column`, 'missing_column');
    }
  }
  if (rows.length > PAYMENT_BATCH_ITEMS_MAX) {
    throw validationError('items', `a batch has 1 to ${PAYMENT_BATCH_ITEMS_MAX} items`, 'out_of_range');
  }
  return rows.map(itemOfCsvRow);
}
