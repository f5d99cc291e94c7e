/**
 * The batch-shaped posting path. Requests enqueue transfer commands; one batch at a time takes everything
 * queued (a batch of one at low load), and in ONE transaction: claims idempotency keys, locks the accounts
 * involved in id order, decides each command in order with pure rules over the locked balances (so one
 * command that lacks funds fails alone), and writes transfers, journal entries, account sums, outbox events
 * and idempotency records. One commit then carries many transfers.
 */
import { LEDGER_WRITER_LANES_MAX } from '../../config.ts';
import { AppError } from '../../domain/errors.ts';
import type { EventRecord } from '../../domain/events.ts';
import { directPostings, holdPostings } from '../../domain/ledger.ts';
import type { Transfer } from '../../domain/transferRecord.ts';
import {
  deleteIdempotencyRecord,
  findIdempotencyRecords,
  tryLockIdempotencyKeys,
} from '../../store/repositories/idempotency.ts';
import { insertTransfers } from '../../store/repositories/transfers.ts';
import { SQLSTATE, sqlState } from '../../store/store.ts';
import type { Deps } from '../deps.ts';
import { recordEvents, transferEvent } from '../events.ts';
import {
  failureResult,
  type IdempotencyContext,
  type IdempotentOutcome,
  inFlightError,
  judgeRecord,
  outcomeOf,
  recordIdempotentResults,
} from '../idempotency.ts';
import { PostingSession, refusalError } from './session.ts';

/** The most commands one transaction carries. */
export const LEDGER_BATCH_COMMANDS_MAX = 200;
/** Retries of a whole batch after a deadlock or serialization failure before it is split up. */
const LEDGER_BATCH_RETRIES_MAX = 3;

export interface TransferCommand {
  kind: 'transfer';
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

/**
 * A request refused before it reached the ledger for a reason that is recorded under its key (a wallet that
 * does not exist): it passes through the writer only so the refusal is claimed and recorded like any other.
 */
export interface RefusalCommand {
  kind: 'refusal';
  error: AppError;
  idempotency: IdempotencyContext;
}

export type WriterCommand = TransferCommand | RefusalCommand;

/** One turn of the event loop: timers and I/O callbacks that are due run first. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

interface Pending {
  /** When it was queued, for the writer's wait metric. */
  enqueuedAtMs: number;
  command: WriterCommand;
  resolve: (outcome: IdempotentOutcome) => void;
  reject: (error: unknown) => void;
}

/** FNV-1a over a string: spreads account ids over lanes, the same id always to the same lane. */
function laneIndex(routingKey: string, lanes: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < routingKey.length; i++) {
    hash ^= routingKey.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % lanes;
}

/**
 * The writer of a process: one or more lanes, each with its own queue and its own transaction at a time.
 * A command goes to the lane of its source account, so a hot wallet's transfers still batch together in one
 * lane while transfers from distinct wallets commit in parallel. Batches in different lanes lock their
 * accounts in the same (id) order, so they wait for each other rather than deadlock.
 */
export class LedgerWriter {
  private readonly lanes: WriterLane[];

  constructor(deps: Deps, lanes = 1) {
    if (!Number.isInteger(lanes) || lanes < 1 || lanes > LEDGER_WRITER_LANES_MAX) {
      throw new RangeError(`a ledger writer has 1 to ${LEDGER_WRITER_LANES_MAX} lanes, not ${lanes}`);
    }
    this.lanes = Array.from({ length: lanes }, () => new WriterLane(deps));
  }

  submit(command: WriterCommand): Promise<IdempotentOutcome> {
    const routingKey =
      command.kind === 'transfer'
        ? command.debitAccountId
        : `${command.idempotency.organizationId}:${command.idempotency.key}`;
    return (this.lanes[laneIndex(routingKey, this.lanes.length)] as WriterLane).submit(command);
  }
}

/** One queue and one batch at a time. */
class WriterLane {
  private queue: Pending[] = [];
  private running = false;

  constructor(private readonly deps: Deps) {}

  submit(command: WriterCommand): Promise<IdempotentOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ command, resolve, reject, enqueuedAtMs: performance.now() });
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
        const cutAtMs = performance.now();
        this.deps.metrics?.observeWriterBatch(batch.length, cutAtMs - (batch[0]?.enqueuedAtMs ?? cutAtMs));
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

  private async runBatch(commands: WriterCommand[]): Promise<(IdempotentOutcome | AppError)[]> {
    const deps = this.deps;
    return deps.store.transaction(async (tx) => {
      const now = deps.now();
      const outcomes: (IdempotentOutcome | AppError | undefined)[] = new Array(commands.length);
      // The answer a repeat of command i replays: what was recorded for it, byte for byte.
      const recorded: (IdempotentOutcome | undefined)[] = new Array(commands.length);
      const live: number[] = [];
      const repeats: { index: number; first: number }[] = [];

      // Every key of the batch is taken, then every record read, with one statement each (the reads as a
      // statement of their own, after the locks, so they see what a holder committed before letting go).
      const scoped = (c: WriterCommand) => `${c.idempotency.organizationId}\u0000${c.idempotency.key}`;
      const firsts = new Map<string, number>();
      for (const [i, command] of commands.entries()) {
        if (command.idempotency.key === undefined) live.push(i);
        else if (!firsts.has(scoped(command))) firsts.set(scoped(command), i);
      }
      const keyOf = (i: number) => {
        const c = commands[i] as WriterCommand;
        return { organizationId: c.idempotency.organizationId, key: c.idempotency.key as string };
      };
      const claimed = [...firsts.values()];
      const locked = await tryLockIdempotencyKeys(tx, claimed.map(keyOf));
      const held = claimed.filter((_, j) => locked[j]);
      const stored = new Map(
        (await findIdempotencyRecords(tx, held.map(keyOf))).map((r) => [
          `${r.organizationId}\u0000${r.key}`,
          r,
        ]),
      );

      // Per key in this batch: the command that claimed it, and whether it is decided here (live) or the
      // key is held by another transaction (busy). The same request again receives the live command's
      // outcome as a replay, as it would had it waited for the commit; another request under that key is told
      // the key is in flight. When the key already has a stored outcome, each command is answered from it
      // (replay, or 422 for another request).
      const claims = new Map<string, { first: number; live: boolean; busy: boolean }>();
      for (const [j, i] of claimed.entries()) {
        const command = commands[i] as WriterCommand;
        if (!locked[j]) {
          outcomes[i] = inFlightError();
          claims.set(scoped(command), { first: i, live: false, busy: true });
          continue;
        }
        try {
          const verdict = judgeRecord(
            stored.get(scoped(command)),
            { ...command.idempotency, ...keyOf(i) },
            now,
          );
          // An expired record may linger until the pruner runs: the key is free again.
          if (verdict.expired) await deleteIdempotencyRecord(tx, keyOf(i).organizationId, keyOf(i).key);
          if (verdict.outcome) outcomes[i] = verdict.outcome;
          else live.push(i);
          claims.set(scoped(command), { first: i, live: !verdict.outcome, busy: false });
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          outcomes[i] = error;
          claims.set(scoped(command), { first: i, live: false, busy: false });
        }
      }
      for (const [i, command] of commands.entries()) {
        if (command.idempotency.key === undefined) continue;
        const earlier = claims.get(scoped(command)) as { first: number; live: boolean; busy: boolean };
        if (earlier.first === i) continue;
        if (earlier.busy) outcomes[i] = inFlightError();
        else if (earlier.live) {
          if (commands[earlier.first]?.idempotency.fingerprint === command.idempotency.fingerprint) {
            repeats.push({ index: i, first: earlier.first });
          } else {
            outcomes[i] = inFlightError();
          }
        } else {
          try {
            outcomes[i] = judgeRecord(
              stored.get(scoped(command)),
              { ...command.idempotency, ...keyOf(i) },
              now,
            ).outcome;
          } catch (error) {
            if (!(error instanceof AppError)) throw error;
            outcomes[i] = error;
          }
        }
      }
      // Commands are decided in the order they arrived.
      live.sort((x, y) => x - y);

      const session = new PostingSession(tx);
      await session.lock(
        live.flatMap((i) => {
          const c = commands[i] as WriterCommand;
          return c.kind === 'transfer' ? [c.debitAccountId, c.creditAccountId] : [];
        }),
      );
      const transfers: Transfer[] = [];
      const events: EventRecord[] = [];
      const records: { context: IdempotencyContext & { key: string }; outcome: IdempotentOutcome }[] = [];

      for (const i of live) {
        const command = commands[i] as WriterCommand;
        const decided = this.decide(command, session, now);
        let outcome: IdempotentOutcome;
        if (decided instanceof AppError) {
          outcomes[i] = decided;
          outcome = outcomeOf(failureResult(decided, command.idempotency.requestId));
        } else {
          transfers.push(decided.transfer);
          events.push(...decided.events);
          outcome = outcomeOf({ status: 201, body: (command as TransferCommand).present(decided.transfer) });
          outcomes[i] = outcome;
        }
        recorded[i] = outcome;
        const { key } = command.idempotency;
        if (key !== undefined) records.push({ context: { ...command.idempotency, key }, outcome });
      }

      for (const { index, first } of repeats) {
        const original = recorded[first];
        outcomes[index] = original && { ...original, replayed: true };
      }

      // Transfers first: the journal entries refer to them.
      await insertTransfers(tx, transfers);
      await session.flush(now);
      await recordEvents(tx, deps, events);
      await recordIdempotentResults(tx, records, now);
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

  /** One command's decision over the session's sums: the new transfer and its events, or the refusal. */
  private decide(
    command: WriterCommand,
    session: PostingSession,
    now: Date,
  ): AppError | { transfer: Transfer; events: EventRecord[] } {
    if (command.kind === 'refusal') return command.error;
    const t = command.transfer;
    const refusal = session.tryPost({
      id: this.deps.newId('journalEntry'),
      organizationId: t.organizationId,
      transferId: t.id,
      kind: command.settleAtOnce ? 'direct' : 'hold',
      holdEntryId: null,
      createdAt: now,
      postings: command.settleAtOnce
        ? directPostings(command.debitAccountId, command.creditAccountId, t.amountMinor, t.currency)
        : holdPostings(command.debitAccountId, command.creditAccountId, t.amountMinor, t.currency),
    });
    if (refusal) {
      const fromSource = refusal.accountId === command.debitAccountId;
      const param = !fromSource ? 'destination' : refusal.code === 'wallet_not_active' ? 'source' : 'amount';
      return refusalError(refusal, 'transfer', param);
    }
    const transfer: Transfer = command.settleAtOnce
      ? { ...t, status: 'settled', ledgerState: 'posted', settledAt: now, createdAt: now, updatedAt: now }
      : {
          ...t,
          status: 'pending',
          ledgerState: 'pending',
          nextRailCheckAt: now,
          createdAt: now,
          updatedAt: now,
        };
    const events = [transferEvent(this.deps, 'transfer.created', transfer, now)];
    if (command.settleAtOnce) events.push(transferEvent(this.deps, 'transfer.settled', transfer, now));
    return { transfer, events };
  }
}
