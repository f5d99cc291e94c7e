/**
 * The batch-shaped posting path. Requests enqueue transfer commands; one batch at a time takes everything
 * queued (a batch of one at low load), and in ONE transaction: claims idempotency keys, locks the accounts
 * involved in id order, decides each command in order with pure rules over the locked balances (so one
 * command that lacks funds fails alone), and writes transfers, journal entries, account sums, outbox events
 * and idempotency records. One commit then carries many transfers. The keys' claims are in batchClaims.ts,
 * one command's decision in transferDecision.ts.
 */

import type { Deps } from '../../../../app/deps.ts';
import { recordEvents } from '../../../../app/events.ts';
import { appendEvidence } from '../../../../app/evidence.ts';
import {
  failureResult,
  type IdempotencyContext,
  type IdempotentOutcome,
  outcomeOf,
  recordIdempotentResults,
} from '../../../../app/idempotency.ts';
import { LEDGER_WRITER_LANES_MAX } from '../../../../config.ts';
import type { Approval } from '../../../../domain/approvals.ts';
import { isDatabaseUnavailable, isTransactionConflict } from '../../../../domain/databaseErrors.ts';
import { AppError } from '../../../../domain/errors.ts';
import type { EventRecord } from '../../../../domain/events.ts';
import type { ChainHead, EvidenceDraft } from '../../../../domain/evidence.ts';
import type { ReviewCase } from '../../../../domain/reviews.ts';
import type { Transfer } from '../../../../domain/transferRecord.ts';
import { QueryPipeline } from '../../../../store/queryPipeline.ts';
import { lockChainHeads } from '../../../../store/repositories/evidence.ts';
import {
  findIdempotencyRecords,
  tryLockIdempotencyKeys,
} from '../../../../store/repositories/idempotency.ts';
import { type EnabledSubscription, findEnabledSubscriptions } from '../../../../store/repositories/outbox.ts';
import { StatementChain } from '../../../../store/statementChain.ts';
import type { Queryable } from '../../../../store/store.ts';
import { inSpan, type SpanRef } from '../../../../telemetry/tracing.ts';
import { insertApprovals } from '../../../authorization/index.ts';
import { type AmlAlertDraft, insertReviewCases, openAmlAlerts } from '../../../compliance/index.ts';
import { PostingSession } from '../../../ledger/index.ts';
import { insertTransfers } from '../../repository.ts';
import { AmlBatchMonitor } from './amlMonitor.ts';
import { policyActivityOf } from './amlWalletFacts.ts';
import {
  answerLaterClaimants,
  type BatchAnswers,
  claimKeys,
  judgeClaims,
  keyOf,
  newBatchAnswers,
  recordsOfHeldKeys,
  replayRepeats,
} from './batchClaims.ts';
import { LimitGuard } from './limitGuard.ts';
import { PilotCapGuard } from './pilotCapGuard.ts';
import { RouteLimitGuard } from './routeLimitGuard.ts';
import { type BatchDecisionContext, decideCommand } from './transferDecision.ts';
import type { ChunkResult, ChunkSteps, TransferCommand, WriterCommand } from './writerCommands.ts';
import { inBatchSpan } from './writerTracing.ts';

/** The most commands one transaction carries. */
export const LEDGER_BATCH_COMMANDS_MAX = 200;
/** Retries of a whole batch after a deadlock or serialization failure before it is split up. */
const LEDGER_BATCH_RETRIES_MAX = 3;

/** One turn of the event loop: timers and I/O callbacks that are due run first. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

interface Pending {
  /** When it was queued, for the writer's wait metric. */
  enqueuedAtMs: number;
  command: WriterCommand;
  /** The span waiting for it (traces on): the batch's parent when it is alone, else linked. */
  trace?: SpanRef | undefined;
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

  /** Runs a payment batch's chunk in its own transaction (retried on a deadlock or serialization failure). */
  runChunk(commands: TransferCommand[], steps: ChunkSteps): Promise<ChunkResult[]> {
    const lane = this.lanes[laneIndex(commands[0]?.debitAccountId ?? '', this.lanes.length)] as WriterLane;
    const attributes = { 'mkoba.ledger.batch.commands': commands.length };
    return inSpan('ledger writer batch', { attributes }, () => lane.runChunk(commands, steps));
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
    const attributes = { 'mkoba.ledger.command': command.kind };
    return inSpan('ledger writer command', { attributes }, (span) => this.enqueue(command, span?.ref));
  }

  private enqueue(command: WriterCommand, trace: SpanRef | undefined): Promise<IdempotentOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ command, trace, resolve, reject, enqueuedAtMs: performance.now() });
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
        await inBatchSpan(batch, cutAtMs, () => this.runWithFallback(batch));
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
        const retryable = isTransactionConflict(error);
        if (retryable && attempt < LEDGER_BATCH_RETRIES_MAX) continue;
        // No command is to blame for an unreachable database: each gets the 503, none runs alone.
        if (batch.length === 1 || isDatabaseUnavailable(error)) {
          for (const pending of batch) pending.reject(error);
          return;
        }
        for (const pending of batch) await this.runWithFallback([pending]);
        return;
      }
    }
  }

  async runChunk(commands: TransferCommand[], steps: ChunkSteps): Promise<ChunkResult[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        let results: ChunkResult[] = [];
        await this.runBatch(commands, steps, (r) => {
          results = r;
        });
        return results;
      } catch (error) {
        const retryable = isTransactionConflict(error);
        if (!retryable || attempt >= LEDGER_BATCH_RETRIES_MAX) throw error;
      }
    }
  }

  private async runBatch(
    commands: WriterCommand[],
    steps?: ChunkSteps,
    onResults?: (results: ChunkResult[]) => void,
  ): Promise<(IdempotentOutcome | AppError)[]> {
    const deps = this.deps;
    const transferCommands = commands.filter((c): c is TransferCommand => c.kind === 'transfer');
    const monitor = await AmlBatchMonitor.prepare(deps, transferCommands, policyActivityOf(transferCommands));
    return deps.store.transaction(async (tx) => {
      if (steps) await steps.lockFirst(tx);
      const now = deps.now();
      const answers = newBatchAnswers(commands.length);
      // Every key of the batch is taken, then every record read, with one statement each (the reads as a
      // statement of their own, after the locks, so they see what a holder committed before letting go).
      const claimed = claimKeys(commands, answers.live);
      const pipeline = new QueryPipeline(tx);
      const session = new PostingSession(tx);
      const [locked, storedRecords, , limits, routeLimits, pilotCaps, heads, subscriptions] =
        await lockAndRead(pipeline, deps, session, commands, claimed, transferCommands, steps, now);
      const stored = recordsOfHeldKeys(commands, claimed, locked, storedRecords);
      const claims = await judgeClaims(tx, commands, claimed, locked, stored, now, answers);
      answerLaterClaimants(commands, claims, stored, now, answers);
      // Commands are decided in the order they arrived.
      answers.live.sort((x, y) => x - y);

      steps?.beforeDecide(session, now);
      const liveTransfers = answers.live.flatMap((i) =>
        commands[i]?.kind === 'transfer' ? [commands[i] as TransferCommand] : [],
      );
      await monitor.readActivity(tx, deps.store, liveTransfers, now, (id) => session.sumsOf(id));
      const batch: BatchDecisionContext = { deps, session, monitor, limits, routeLimits, pilotCaps, now };
      const decided = decideLive(batch, commands, answers);
      replayRepeats(answers);

      const chunkResults = steps ? chunkResultsOf(commands, answers, decided.created) : [];
      steps?.afterDecide(session, chunkResults, now);
      monitor.remember(deps.store, (id) => session.sumsOf(id), now);
      await writeDecided(tx, batch, decided, heads, subscriptions);
      // Rare, and it reads what it opens (an alert already open for the wallet and rule is not opened again).
      await openAmlAlerts(tx, deps, decided.alerts, now);
      if (steps) {
        await steps.record(tx, chunkResults, now);
        onResults?.(chunkResults);
      }
      return answers.outcomes.map((o) => o ?? undecidedCommandError());
    });
  }
}

/**
 * Everything the batch reads or locks before deciding goes out in one round trip (QueryPipeline), in
 * this order: the keys, then their records (a statement of its own after the locks, so it sees what a
 * holder committed before letting go; records of keys held elsewhere are ignored), then the accounts,
 * usage rows, evidence chain heads and webhook subscriptions of every transfer command in the batch.
 * That is more than the live commands need when some turn out to be replays: locking a replay's
 * accounts or usage too changes nothing, and costs less than another round trip.
 */
function lockAndRead(
  pipeline: QueryPipeline,
  deps: Deps,
  session: PostingSession,
  commands: readonly WriterCommand[],
  claimed: readonly number[],
  transferCommands: readonly TransferCommand[],
  steps: ChunkSteps | undefined,
  now: Date,
) {
  const organizations = [...new Set(transferCommands.map((c) => c.transfer.organizationId))].sort();
  return Promise.all([
    tryLockIdempotencyKeys(
      pipeline,
      claimed.map((i) => keyOf(commands, i)),
    ),
    findIdempotencyRecords(
      pipeline,
      claimed.map((i) => keyOf(commands, i)),
    ),
    session.lock(
      [
        ...(steps?.accounts ?? []),
        ...transferCommands.flatMap((c) =>
          c.feeAccountId === undefined
            ? [c.debitAccountId, c.creditAccountId]
            : [c.debitAccountId, c.creditAccountId, c.feeAccountId],
        ),
      ],
      pipeline,
    ),
    LimitGuard.lock(pipeline, transferCommands, now),
    RouteLimitGuard.lock(pipeline, transferCommands, now),
    PilotCapGuard.lock(pipeline, deps.pilotCaps, transferCommands, now),
    lockChainHeads(pipeline, organizations),
    findEnabledSubscriptions(pipeline, organizations),
  ]);
}

/** What the batch's decisions write beside its transfers, gathered in the order they were decided. */
interface DecidedBatch {
  transfers: Transfer[];
  events: EventRecord[];
  records: { context: IdempotencyContext & { key: string }; outcome: IdempotentOutcome }[];
  evidence: EvidenceDraft[];
  reviews: ReviewCase[];
  alerts: AmlAlertDraft[];
  approvals: Approval[];
  /** The transfer each accepted command created, by the command's index. */
  created: Map<number, Transfer>;
}

/** Decides the live commands in order, each over what the ones before it left, and answers each. */
function decideLive(
  batch: BatchDecisionContext,
  commands: readonly WriterCommand[],
  { live, outcomes, recorded }: BatchAnswers,
): DecidedBatch {
  const decided: DecidedBatch = {
    transfers: [],
    events: [],
    records: [],
    evidence: [],
    reviews: [],
    alerts: [],
    approvals: [],
    created: new Map(),
  };
  for (const i of live) {
    const command = commands[i] as WriterCommand;
    const decision = decideCommand(batch, command);
    if (!(decision.outcome instanceof AppError)) decided.created.set(i, decision.outcome.transfer);
    if (decision.evidence) decided.evidence.push(decision.evidence);
    if (decision.review) decided.reviews.push(decision.review);
    if (decision.approval) decided.approvals.push(decision.approval);
    decided.alerts.push(...(decision.alerts ?? []));
    let outcome: IdempotentOutcome;
    if (decision.outcome instanceof AppError) {
      outcomes[i] = decision.outcome;
      outcome = outcomeOf(failureResult(decision.outcome, command.idempotency.requestId));
    } else {
      decided.transfers.push(decision.outcome.transfer);
      decided.events.push(...decision.outcome.events);
      const travelRule = (command as TransferCommand).travelRule;
      if (travelRule) decided.evidence.push(travelRule);
      outcome = outcomeOf({
        status: 201,
        body: (command as TransferCommand).present(decision.outcome.transfer),
      });
      outcomes[i] = outcome;
    }
    recorded[i] = outcome;
    const { key } = command.idempotency;
    if (key !== undefined) decided.records.push({ context: { ...command.idempotency, key }, outcome });
  }
  return decided;
}

/** A payment batch chunk's results: each command's outcome, and the transfer it created. */
function chunkResultsOf(
  commands: readonly WriterCommand[],
  { outcomes }: BatchAnswers,
  created: ReadonlyMap<number, Transfer>,
): ChunkResult[] {
  return commands.map((_, i) => ({
    outcome: outcomes[i] ?? undecidedCommandError(),
    transfer: created.get(i),
  }));
}

/** The batch's writes go out as one statement; its foreign keys are checked once all of them are in. */
async function writeDecided(
  tx: Queryable,
  { deps, session, limits, pilotCaps, now }: BatchDecisionContext,
  decided: DecidedBatch,
  heads: ReadonlyMap<string, ChainHead>,
  subscriptions: readonly EnabledSubscription[],
): Promise<void> {
  const writes = new StatementChain();
  await insertTransfers(writes, decided.transfers);
  await session.flush(now, writes);
  await limits.save(writes);
  await pilotCaps?.save(writes);
  if (decided.evidence.length > 0) await appendEvidence(tx, deps, decided.evidence, writes, heads);
  await recordEvents(tx, deps, decided.events, writes, subscriptions);
  await recordIdempotentResults(writes, decided.records, now);
  await insertReviewCases(writes, decided.reviews);
  await insertApprovals(writes, decided.approvals);
  await writes.run(tx);
}

/** A command the batch left unanswered: never expected, answered as an internal error rather than hung. */
function undecidedCommandError(): AppError {
  return new AppError({
    status: 500,
    code: 'internal_error',
    title: 'Internal error',
    detail: 'undecided command',
  });
}
