/**
 * The posting module's one write path. A session belongs to one transaction: it locks the accounts the
 * entries will touch (once, in id order, so writers never deadlock on each other), decides each entry with
 * the pure rule in src/modules/ledger/domain/posting.ts over the sums as they stand after the entries before it, and
 * writes every accepted entry and the changed sums together. The batch writer and every single movement
 * (settle, fail, cancel, return, funding) use it, so there is one overdraft rule and one way to write.
 */
import { AppError } from '../../../domain/errors.ts';
import type { Queryable } from '../../../store/store.ts';
import type { AccountSums } from '../domain/ledger.ts';
import {
  decideEntry,
  decideRelease,
  type PostingAccount,
  type PostingRefusal,
  type ReleaseDecision,
  type WaitingMovement,
} from '../domain/posting.ts';
import {
  insertJournalEntries,
  type JournalEntry,
  lockAccounts,
  updateAccountSums,
} from '../repository/ledger.ts';

export class PostingSession {
  private accounts = new Map<string, PostingAccount>();
  private sums = new Map<string, AccountSums>();
  private accepted: JournalEntry[] = [];
  private locked = false;

  constructor(private readonly tx: Queryable) {}

  /** Locks every account the session's entries may touch. Once per session: later locks could deadlock. */
  async lock(accountIds: readonly string[], db: Queryable = this.tx): Promise<void> {
    if (this.locked) throw new Error('a posting session locks its accounts once');
    this.locked = true;
    this.accounts = await lockAccounts(db, accountIds);
  }

  account(id: string): PostingAccount | undefined {
    return this.accounts.get(id);
  }

  /** An account's sums as they stand after the entries accepted so far (as locked, if none touched it). */
  sumsOf(id: string): AccountSums | undefined {
    return this.sums.get(id) ?? this.accounts.get(id);
  }

  /**
   * The gate every waiting movement passes when it moves (src/modules/ledger/domain/posting.ts, `decideRelease`): its
   * wallets as this session locked them, so a freeze that committed while the movement waited, or while
   * this waited for the lock, is what decides.
   */
  release(
    movement: WaitingMovement,
    wallets: { source?: string | null | undefined; destination?: string | null | undefined },
    options: { inboundClearedByReview?: boolean } = {},
  ): ReleaseDecision {
    const party = (id: string | null | undefined) => {
      if (!id) return undefined;
      const account = this.accounts.get(id);
      if (!account) throw new Error(`release of a movement whose wallet ${id} was not locked`);
      return account;
    };
    return decideRelease(
      movement,
      { source: party(wallets.source), destination: party(wallets.destination) },
      options,
    );
  }

  /** Decides an entry; an accepted one moves the session's sums and is written at flush. */
  tryPost(entry: JournalEntry): PostingRefusal | undefined {
    const decision = decideEntry(this.accounts, this.sums, entry);
    if (!decision.ok) return decision.refusal;
    for (const [id, sums] of decision.next) this.sums.set(id, sums);
    this.accepted.push(entry);
    return undefined;
  }

  /**
   * Writes the accepted entries and the sums they changed, in the session's transaction, or into `writes`
   * (a StatementChain the caller sends with its other writes).
   */
  async flush(now: Date, writes: Queryable = this.tx): Promise<void> {
    await insertJournalEntries(writes, this.accepted);
    await updateAccountSums(
      writes,
      [...this.sums].map(([id, s]) => ({ id, ...s })),
      now,
    );
    this.accepted = [];
    this.sums.clear();
  }
}

/** What a refusal means to the caller: the movement is refused, nothing is written. */
export function refusalError(refusal: PostingRefusal, movement: string, param?: string): AppError {
  switch (refusal.code) {
    case 'insufficient_funds':
      return new AppError({
        status: 422,
        code: 'insufficient_funds',
        title: 'Insufficient funds',
        detail: `Wallet ${refusal.accountId} does not have enough available balance for this ${movement}.`,
        param,
      });
    case 'wallet_not_active':
      return new AppError({
        status: 409,
        code: 'wallet_not_active',
        title: 'Wallet not active',
        detail: `Wallet ${refusal.accountId} is not active: frozen and closed wallets cannot send, and closed wallets cannot receive.`,
        param,
      });
    case 'account_sum_overflow':
      return new AppError({
        status: 422,
        code: 'limit_exceeded',
        title: 'Ledger limit reached',
        detail: `This ${movement} would take ledger account ${refusal.accountId} past the largest running sum the ledger can hold; it is refused and nothing was written.`,
        param,
      });
  }
}

/** Posts one entry in the caller's transaction, or throws the refusal. */
export async function postEntry(
  tx: Queryable,
  entry: JournalEntry,
  now: Date,
  movement: string,
  param?: string,
): Promise<void> {
  const session = new PostingSession(tx);
  await session.lock(entry.postings.map((p) => p.accountId));
  const refusal = session.tryPost(entry);
  if (refusal) throw refusalError(refusal, movement, param);
  await session.flush(now);
}
