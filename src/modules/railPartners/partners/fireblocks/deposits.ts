/**
 * Deposits whose webhook never came, read from Fireblocks' transaction history (GET /transactions):
 * completed transfers into vault accounts created after a point, oldest first (`orderBy=createdAt`,
 * `sort=ASC`), page after page by the `next-page` header's cursor sent back as `next`, at most a given
 * number of pages. The caller keeps where the next read starts (docs/rails/fireblocks.md, "Missed deposits").
 */

import { isRecord } from '../../../../domain/json.ts';
import type { CustodyDepositReport } from '../../../../rails/partner.ts';
import { type FireblocksConfig, FireblocksError, fireblocksRequest } from './connection.ts';
import { depositOfTransaction } from './protocol.ts';

/** Transactions one page of the history holds (Fireblocks' largest `limit`). */
export const FIREBLOCKS_DEPOSIT_PAGE = 500;

export interface CustodyDepositRead {
  deposits: CustodyDepositReport[];
  /** The creation time (ms) of the last transaction read, the newest; undefined when none was. */
  lastCreatedAt: number | undefined;
  /** Whether the history was read to its end; false when the page bound stopped the read. */
  complete: boolean;
}

/**
 * Completed transfers into vault accounts created after `after`, oldest first, read as deposits (those
 * from outside; sweeps between vault accounts are passed over), at most `maxPages` pages.
 */
export async function fireblocksDepositsSince(
  config: FireblocksConfig,
  after: Date,
  maxPages: number,
): Promise<CustodyDepositRead> {
  const filters = new URLSearchParams({
    status: 'COMPLETED',
    destType: 'VAULT_ACCOUNT',
    after: String(after.getTime()),
    orderBy: 'createdAt',
    sort: 'ASC',
    limit: String(FIREBLOCKS_DEPOSIT_PAGE),
  });
  const deposits: CustodyDepositReport[] = [];
  let lastCreatedAt: number | undefined;
  let next: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    // The filters go with the cursor too, as the SDK sends them when `next` is added to the same request.
    const query = new URLSearchParams(filters);
    if (next !== undefined) query.set('next', next);
    const listed = await fireblocksRequest(config, 'GET', `/transactions?${query}`);
    if (listed.status !== 200 || !Array.isArray(listed.body)) {
      throw new FireblocksError(`Fireblocks answered ${listed.status} to a transaction list`);
    }
    for (const transaction of listed.body) {
      const deposit = depositOfTransaction(transaction);
      if (deposit) deposits.push(deposit);
      if (isRecord(transaction) && typeof transaction.createdAt === 'number')
        lastCreatedAt = Math.max(lastCreatedAt ?? 0, transaction.createdAt);
    }
    if (listed.nextPage === undefined || listed.body.length === 0)
      return { deposits, lastCreatedAt, complete: true };
    next = listed.nextPage;
  }
  return { deposits, lastCreatedAt, complete: false };
}
