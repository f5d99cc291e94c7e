/**
 * The ledger and posting module: the one seam every movement of money crosses. Accounts and journal entries (the posting rules), the posting session that locks, decides with the posting decision and writes inside the moving transaction, the guards on a movement's source, and the ledger's verification.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { ledgerRoutes } from './routes.ts';

export {
  ACCOUNT_KINDS,
  type AccountSums,
  directPostings,
  holdPostings,
  JOURNAL_ENTRY_KINDS,
  netBalances,
  POSTING_PHASES,
  POSTING_SIDES,
  type Posting,
  postHoldPostings,
  reversalPostings,
  transferPostings,
  voidHoldPostings,
  walletBalances,
  ZERO_SUMS,
} from './domain/ledger.ts';
export type { WaitingMovement } from './domain/posting.ts';
export {
  ensureSystemAccount,
  findJournalEntry,
  findOpenHold,
  JOURNAL_ENTRY_COLUMNS,
  type JournalEntry,
  lockAccounts,
  withPostings,
} from './repository/ledger.ts';
export { ledgerRoutes } from './routes.ts';
export {
  type LedgerAccount,
  listJournalEntries,
  railClearingAccount,
  trustLedgerAccount,
} from './useCases/accounts.ts';
export { directEntry } from './useCases/directEntry.ts';
export { guardMovementSource } from './useCases/movementSources.ts';
export { PostingSession, postEntry, refusalError } from './useCases/postingSession.ts';
export { type LedgerViolation, verifyLedger } from './useCases/verify.ts';

/** The module's face on the HTTP edge. */
export const ledgerHttp: HttpModule = { schemas: [], routes: ledgerRoutes };
