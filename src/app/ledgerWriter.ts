/**
 * The batch-shaped posting path. Requests enqueue transfer commands; one batch at a time takes everything
 * queued (a batch of one at low load), and in ONE transaction: claims idempotency keys, locks the accounts
 * involved in id order, decides each command in order with pure rules over the locked balances (so one
 * command that lacks funds fails alone), and writes transfers, journal entries, account sums, outbox events
 * and idempotency records. One commit then carries many transfers.
 */
import { AppError } from '../domain/errors.ts';
import type { EventRecord } from '../domain/events.ts';
import {
  type AccountSums,
  applyPosting,
  type DebitRefusal,
  decideDebit,
  directPostings,
  holdPostings,
  isBalanced,
} from '../domain/ledger.ts';
import type { Transfer } from '../domain/transferRecord.ts';
import {
  insertJournalEntries,
  type JournalEntry,
  lockAccounts,
  updateAccountSums,
} from '../store/repositories/ledger.ts';
import { insertTransfer } from '../store/repositories/transfers.ts';
import { SQLSTATE, sqlState } from '../store/store.ts';
import type { Deps } from './deps.ts';
import { recordEvents, transferEvent } from './events.ts';
import {
  claimIdempotencyKey,
  failureResult,
  type IdempotencyContext,
  type IdempotentOutcome,
  inFlightError,
  recordIdempotentResult,
  type WriteResult,
} from './idempotency.ts';

/** The most commands one transaction carries. */
export const LEDGER_BATCH_COMMANDS_MAX = 200;
/** Retries of a whole batch after a deadlock or serialization failure before it is split up. */
const LEDGER_BATCH_RETRIES_MAX = 3;

export interface TransferCommand {
  /** Fully validated; status and ledger state are set by the decision. */
  transfer: Transfer;
  debitAccountId: string;
  creditAccountId: string;
  /** Internal transfers post at once; rail transfers hold until the rail reports. */
  settleAtOnce: boolean;
  idempotency: IdempotencyContext;
  /** The wire form returned to the client and stored for replays. */
  present: (transfer: Transfer) => unknown;
}

/** One turn of the event loop: timers and I/O callbacks that are due run first. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The outcome a repeated request receives: the first one's recorded outcome, marked as replayed. */
function asReplay(
  outcome: IdempotentOutcome | AppError | undefined,
): IdempotentOutcome | AppError | undefined {
  if (outcome === undefined) return undefined;
  if (outcome instanceof AppError) return new AppError({ ...outcome, replayed: true });
  return { ...outcome, replayed: true };
}

interface Pending {
  command: TransferCommand;
  resolve: (outcome: IdempotentOutcome) => void;
  reject: (error: unknown) => void;
}

const REFUSALS: Record<DebitRefusal, (t: Transfer) => AppError> = {
  insufficient_funds: (t) =>
    new AppError({
      status: 422,
      code: 'insufficient_funds',
      title: 'Insufficient funds',
      detail: `Wallet ${t.sourceWalletId} does not have enough available balance for this transfer.`,
      param: 'amount',
    }),
  wallet_not_active: (t) =>
    new AppError({
      status: 409,
      code: 'wallet_not_active',
      title: 'Wallet cannot send',
      detail: `Wallet ${t.sourceWalletId} is not active: frozen and closed wallets cannot send.`,
      param: 'source',
    }),
};

export class LedgerWriter {
  private queue: Pending[] = [];
  private running = false;

  constructor(private readonly deps: Deps) {}

  submit(command: TransferCommand): Promise<IdempotentOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ command, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        // Let requests that have arrived reach the queue before the batch is cut. The embedded database
        // answers through promises alone, so a transaction never yields to the event loop; without this
        // turn each batch there carried exactly one command, however many requests were waiting.
        await yieldToEventLoop();
        const batch = this.queue.splice(0, LEDGER_BATCH_COMMANDS_MAX);
        await this.runWithFallback(batch);
      }
    } finally {
      this.running = false;
    }
  }

  /** A batch that fails as a whole is retried; if it still fails, each command runs alone so one bad one fails alone. */
  private async runWithFallback(batch: Pending[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const outcomes = await this.runBatch(batch.map((p) => p.command));
        outcomes.forEach((outcome, i) => {
          const pending = batch[i];
          if (!pending) return;
          if (outcome instanceof Error) pending.reject(outcome);
          else pending.resolve(outcome);
        });
        return;
      } catch (error) {
        const retryable = [SQLSTATE.deadlockDetected, SQLSTATE.serializationFailure].includes(
          sqlState(error) as '40P01',
        );
        if (retryable && attempt < LEDGER_BATCH_RETRIES_MAX) continue;
        if (batch.length === 1) {
          batch[0]?.reject(error);
          return;
        }
        for (const pending of batch) await this.runWithFallback([pending]);
        return;
      }
    }
  }

  private async runBatch(commands: TransferCommand[]): Promise<(IdempotentOutcome | AppError)[]> {
    const deps = this.deps;
    return deps.store.transaction(async (tx) => {
      const now = deps.now();
      const outcomes: (IdempotentOutcome | AppError | undefined)[] = new Array(commands.length);
      const live: number[] = [];
      // Per key in this batch: the command that claimed it, and whether it is decided here (live) or the
      // key is held by another transaction (busy). Repeats of a live command wait for its outcome.
      const claims = new Map<string, { first: number; live: boolean; busy: boolean }>();
      const repeats: { index: number; first: number }[] = [];

      for (const [i, command] of commands.entries()) {
        const { key } = command.idempotency;
        if (key === undefined) {
          live.push(i);
          continue;
        }
        // The advisory lock is re-entrant within one transaction, so duplicates inside a batch are caught
        // here. The same request again receives the live command's outcome as a replay, as it would had it
        // waited for the commit; another request under that key is told the key is in flight. When the key
        // already has a stored outcome, each command is answered from it (replay, or 422 for another request).
        const scopedKey = `${command.idempotency.organizationId}\u0000${key}`;
        const earlier = claims.get(scopedKey);
        if (earlier?.busy) {
          outcomes[i] = inFlightError();
          continue;
        }
        if (earlier?.live) {
          if (commands[earlier.first]?.idempotency.fingerprint === command.idempotency.fingerprint) {
            repeats.push({ index: i, first: earlier.first });
          } else {
            outcomes[i] = inFlightError();
          }
          continue;
        }
        try {
          const replay = await claimIdempotencyKey(tx, { ...command.idempotency, key }, now);
          if (replay) outcomes[i] = replay;
          else live.push(i);
          if (!earlier) claims.set(scopedKey, { first: i, live: !replay, busy: false });
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          outcomes[i] = error;
          const busy = error.code === 'idempotency_key_in_flight';
          if (!earlier) claims.set(scopedKey, { first: i, live: false, busy });
        }
      }

      const accounts = await lockAccounts(
        tx,
        live.flatMap((i) => {
          const c = commands[i] as TransferCommand;
          return [c.debitAccountId, c.creditAccountId];
        }),
      );
      const sums = new Map<string, AccountSums>([...accounts].map(([id, a]) => [id, a]));
      const transfers: Transfer[] = [];
      const entries: JournalEntry[] = [];
      const events: EventRecord[] = [];
      const records: { context: IdempotencyContext & { key: string }; result: WriteResult }[] = [];

      for (const i of live) {
        const command = commands[i] as TransferCommand;
        const debit = accounts.get(command.debitAccountId);
        const credit = sums.get(command.creditAccountId);
        if (!debit || !credit) throw new Error(`account missing for transfer ${command.transfer.id}`);
        const t = command.transfer;
        const refusal = decideDebit(
          sums.get(debit.id) as AccountSums,
          debit.walletStatus ?? 'active',
          t.amountMinor,
        );
        let result: WriteResult;
        if (refusal) {
          const error = REFUSALS[refusal](t);
          outcomes[i] = error;
          result = failureResult(error);
        } else {
          const postings = command.settleAtOnce
            ? directPostings(command.debitAccountId, command.creditAccountId, t.amountMinor, t.currency)
            : holdPostings(command.debitAccountId, command.creditAccountId, t.amountMinor, t.currency);
          if (!isBalanced(postings)) throw new Error(`unbalanced postings for ${t.id}`);
          for (const p of postings)
            sums.set(p.accountId, applyPosting(sums.get(p.accountId) as AccountSums, p));
          const transfer: Transfer = command.settleAtOnce
            ? {
                ...t,
                status: 'settled',
                ledgerState: 'posted',
                settledAt: now,
                createdAt: now,
                updatedAt: now,
              }
            : {
                ...t,
                status: 'pending',
                ledgerState: 'pending',
                nextRailCheckAt: now,
                createdAt: now,
                updatedAt: now,
              };
          transfers.push(transfer);
          entries.push({
            id: deps.newId('journalEntry'),
            organizationId: t.organizationId,
            transferId: t.id,
            kind: command.settleAtOnce ? 'direct' : 'hold',
            holdEntryId: null,
            createdAt: now,
            postings,
          });
          events.push(transferEvent(deps, 'transfer.created', transfer, now));
          if (command.settleAtOnce) events.push(transferEvent(deps, 'transfer.settled', transfer, now));
          result = { status: 201, body: command.present(transfer) };
          outcomes[i] = { ...result, replayed: false };
        }
        const { key } = command.idempotency;
        if (key !== undefined) records.push({ context: { ...command.idempotency, key }, result });
      }

      for (const { index, first } of repeats) outcomes[index] = asReplay(outcomes[first]);

      for (const transfer of transfers) await insertTransfer(tx, transfer);
      await insertJournalEntries(tx, entries);
      const changed = [...sums].filter(([id, s]) => s !== accounts.get(id)).map(([id, s]) => ({ id, ...s }));
      await updateAccountSums(tx, changed, now);
      await recordEvents(tx, deps, events);
      for (const { context, result } of records) await recordIdempotentResult(tx, context, result, now);
      return outcomes.map(
        (o) =>
          o ??
          new AppError({
            status: 500,
            code: 'internal_error',
            title: 'Internal error',
            detail: 'undecided command',
          }),
      );
    });
  }
}
