/**
 * The batch-shaped posting path. Requests enqueue transfer commands; one batch at a time takes everything
 * queued (a batch of one at low load), and in ONE transaction: claims idempotency keys, locks the accounts
 * involved in id order, decides each command in order with pure rules over the locked balances (so one
 * command that lacks funds fails alone), and writes transfers, journal entries, account sums, outbox events
 * and idempotency records. One commit then carries many transfers.
 *
 * Past 400 lines: the queue, the lanes and the one batch transaction share the lock order and the pure
 * decisions' inputs; splitting them would pass that state between files on the hot path.
 */
import { LEDGER_WRITER_LANES_MAX } from '../../config.ts';
import type { Approval } from '../../domain/approvals.ts';
import { AWAITING_APPROVAL_STATUS_REASON } from '../../domain/approvals.ts';
import { SQLSTATE, sqlState } from '../../domain/databaseErrors.ts';
import {
  evaluatePolicy,
  type Policy,
  type PolicyDecision,
  policyNeeds,
} from '../../domain/decisions/policies.ts';
import {
  decideTransferCompliance,
  type RuleHit,
  type ScreeningSummary,
} from '../../domain/decisions/transferCompliance.ts';
import { AppError } from '../../domain/errors.ts';
import type { EventRecord } from '../../domain/events.ts';
import type { EvidenceDraft } from '../../domain/evidence.ts';
import { formatAmount } from '../../domain/money.ts';
import { IN_REVIEW_STATUS_REASON, type ReviewCase } from '../../domain/reviews.ts';
import { feeOf, type Transfer } from '../../domain/transferRecord.ts';
import type { Destination } from '../../domain/transfers.ts';
import type { WaitingMovement } from '../../modules/ledger/index.ts';
import { PostingSession, refusalError, transferPostings } from '../../modules/ledger/index.ts';
import { QueryPipeline } from '../../store/queryPipeline.ts';
import { insertApprovals } from '../../store/repositories/approvals.ts';
import { lockChainHeads } from '../../store/repositories/evidence.ts';
import {
  deleteIdempotencyRecord,
  findIdempotencyRecords,
  tryLockIdempotencyKeys,
} from '../../store/repositories/idempotency.ts';
import { findEnabledSubscriptions } from '../../store/repositories/outbox.ts';
import { insertReviewCases } from '../../store/repositories/reviews.ts';
import { insertTransfers } from '../../store/repositories/transfers.ts';
import { StatementChain } from '../../store/statementChain.ts';
import type { Queryable } from '../../store/store.ts';
import { type AmlAlertDraft, openAmlAlerts } from '../aml/alerts.ts';
import { approvalEvent, newApproval } from '../approvals.ts';
import type { CustomerPolicyFacts } from '../customerPolicyFacts.ts';
import type { Deps } from '../deps.ts';
import { recordEvents, transferEvent } from '../events.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../evidence.ts';
import {
  failureResult,
  type IdempotencyContext,
  type IdempotentOutcome,
  inFlightError,
  judgeRecord,
  outcomeOf,
  recordIdempotentResults,
} from '../idempotency.ts';
import { AmlBatchMonitor, type PolicyActivityNeeds } from './amlMonitor.ts';
import { LimitGuard } from './limitGuard.ts';
import { PilotCapGuard } from './pilotCapGuard.ts';
import { RouteLimitGuard } from './routeLimitGuard.ts';

/** The most commands one transaction carries. */
export const LEDGER_BATCH_COMMANDS_MAX = 200;
/** Retries of a whole batch after a deadlock or serialization failure before it is split up. */
const LEDGER_BATCH_RETRIES_MAX = 3;

export interface TransferCommand {
  kind: 'transfer';
  /** Fully validated; status and ledger state are set by the decision. */
  transfer: Transfer;
  /** The customer who owns the paying wallet. */
  sourceCustomerId: string;
  debitAccountId: string;
  creditAccountId: string;
  /** The organization's fee income account in the currency, when the transfer has a fee (docs/FEES.md). */
  feeAccountId?: string | undefined;
  /** The counterparty's screening, done before the writer (it needs no lock); absent when no name was given. */
  screening?: ScreeningSummary | undefined;
  /** The organization's current authorization policy, read before the writer. */
  policy: Policy;
  /** The paying customer's KYC status and risk level, when a rule of the policy names them. */
  customer?: CustomerPolicyFacts | undefined;
  /** Internal transfers post at once; rail transfers hold until the rail reports. */
  settleAtOnce: boolean;
  /**
   * A movement that waited before reaching the writer (a payment batch's item): it passes the release gate
   * over its wallets as locked in this batch before it is posted.
   */
  released?: WaitingMovement | undefined;
  /** A payment batch item whose batch was approved: that approval covers a rule asking for one. */
  coveredByApproval?: string | undefined;
  /** Travel Rule data given with the transfer: appended as evidence only if the transfer is accepted. */
  travelRule?: EvidenceDraft | undefined;
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

/** What one command of a chunk came to: its outcome, and the transfer when one was created. */
export interface ChunkResult {
  outcome: IdempotentOutcome | AppError;
  transfer?: Transfer | undefined;
}

/**
 * A payment batch's chunk runs in a transaction of its own with these steps around the writer's: the batch
 * row is locked first; its reservation is released (with the accounts locked) before the items are decided,
 * and what the items did is recorded, and what is still to pay reserved again, before the commit.
 */
export interface ChunkSteps {
  /** Accounts the steps post to, locked with the items' accounts. */
  accounts: readonly string[];
  lockFirst(tx: Queryable): Promise<void>;
  beforeDecide(session: PostingSession, now: Date): void;
  /** Posts what follows from the results (the new reservation) in the session, before it is written. */
  afterDecide(session: PostingSession, results: ChunkResult[], now: Date): void;
  /** Records the items and the batch, once the transfers and entries they refer to are written. */
  record(tx: Queryable, results: ChunkResult[], now: Date): Promise<void>;
}

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

  /** Runs a payment batch's chunk in its own transaction (retried on a deadlock or serialization failure). */
  runChunk(commands: TransferCommand[], steps: ChunkSteps): Promise<ChunkResult[]> {
    const lane = this.lanes[laneIndex(commands[0]?.debitAccountId ?? '', this.lanes.length)] as WriterLane;
    return lane.runChunk(commands, steps);
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

  async runChunk(commands: TransferCommand[], steps: ChunkSteps): Promise<ChunkResult[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        let results: ChunkResult[] = [];
        await this.runBatch(commands, steps, (r) => {
          results = r;
        });
        return results;
      } catch (error) {
        const retryable = [SQLSTATE.deadlockDetected, SQLSTATE.serializationFailure].includes(
          sqlState(error) as '40P01',
        );
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
    // What each organization's policy reads of a wallet's activity: the AML monitor reads it for both.
    const policyActivity = new Map<string, PolicyActivityNeeds>();
    for (const c of transferCommands) {
      const needs = policyNeeds(c.policy);
      const before = policyActivity.get(c.transfer.organizationId);
      policyActivity.set(c.transfer.organizationId, {
        windowSeconds: Math.max(needs.activityWindowSeconds, before?.windowSeconds ?? 0),
        aggregateWindowsSeconds: new Set([
          ...(before?.aggregateWindowsSeconds ?? []),
          ...needs.aggregateWindowsSeconds,
        ]),
      });
    }
    const monitor = await AmlBatchMonitor.prepare(deps, transferCommands, policyActivity);
    return deps.store.transaction(async (tx) => {
      if (steps) await steps.lockFirst(tx);
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
      // Everything the batch reads or locks before deciding goes out in one round trip (QueryPipeline), in
      // this order: the keys, then their records (a statement of its own after the locks, so it sees what a
      // holder committed before letting go; records of keys held elsewhere are ignored), then the accounts,
      // usage rows, evidence chain heads and webhook subscriptions of every transfer command in the batch.
      // That is more than the live commands need when some turn out to be replays: locking a replay's
      // accounts or usage too changes nothing, and costs less than another round trip.
      const organizations = [...new Set(transferCommands.map((c) => c.transfer.organizationId))].sort();
      const pipeline = new QueryPipeline(tx);
      const session = new PostingSession(tx);
      const [locked, storedRecords, , limits, routeLimits, pilotCaps, heads, subscriptions] =
        await Promise.all([
          tryLockIdempotencyKeys(pipeline, claimed.map(keyOf)),
          findIdempotencyRecords(pipeline, claimed.map(keyOf)),
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
      const heldKeys = new Set(
        claimed.filter((_, j) => locked[j]).map((i) => scoped(commands[i] as WriterCommand)),
      );
      const stored = new Map<string, (typeof storedRecords)[number]>(
        storedRecords
          .map((r) => [`${r.organizationId}\u0000${r.key}`, r] as const)
          .filter(([scopedKey]) => heldKeys.has(scopedKey)),
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

      steps?.beforeDecide(session, now);
      const liveTransfers = live.flatMap((i) =>
        commands[i]?.kind === 'transfer' ? [commands[i] as TransferCommand] : [],
      );
      await monitor.readActivity(tx, deps.store, liveTransfers, now, (id) => session.sumsOf(id));
      const transfers: Transfer[] = [];
      const events: EventRecord[] = [];
      const records: { context: IdempotencyContext & { key: string }; outcome: IdempotentOutcome }[] = [];
      const evidence: EvidenceDraft[] = [];
      const reviews: ReviewCase[] = [];
      const alerts: AmlAlertDraft[] = [];
      const approvals: Approval[] = [];

      const created = new Map<number, Transfer>();
      for (const i of live) {
        const command = commands[i] as WriterCommand;
        const decided = this.decide(command, session, monitor, limits, now, routeLimits, pilotCaps);
        if (!(decided.outcome instanceof AppError)) created.set(i, decided.outcome.transfer);
        if (decided.evidence) evidence.push(decided.evidence);
        if (decided.review) reviews.push(decided.review);
        if (decided.approval) approvals.push(decided.approval);
        alerts.push(...(decided.alerts ?? []));
        let outcome: IdempotentOutcome;
        if (decided.outcome instanceof AppError) {
          outcomes[i] = decided.outcome;
          outcome = outcomeOf(failureResult(decided.outcome, command.idempotency.requestId));
        } else {
          transfers.push(decided.outcome.transfer);
          events.push(...decided.outcome.events);
          const travelRule = (command as TransferCommand).travelRule;
          if (travelRule) evidence.push(travelRule);
          outcome = outcomeOf({
            status: 201,
            body: (command as TransferCommand).present(decided.outcome.transfer),
          });
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

      const chunkResults = steps
        ? commands.map((_, i) => ({
            outcome:
              outcomes[i] ??
              new AppError({
                status: 500,
                code: 'internal_error',
                title: 'Internal error',
                detail: 'undecided command',
              }),
            transfer: created.get(i),
          }))
        : [];
      steps?.afterDecide(session, chunkResults, now);
      monitor.remember(deps.store, (id) => session.sumsOf(id), now);
      // The batch's writes go out as one statement; its foreign keys are checked once all of them are in.
      const writes = new StatementChain();
      await insertTransfers(writes, transfers);
      await session.flush(now, writes);
      await limits.save(writes);
      await pilotCaps?.save(writes);
      if (evidence.length > 0) await appendEvidence(tx, deps, evidence, writes, heads);
      await recordEvents(tx, deps, events, writes, subscriptions);
      await recordIdempotentResults(writes, records, now);
      await insertReviewCases(writes, reviews);
      await insertApprovals(writes, approvals);
      await writes.run(tx);
      // Rare, and it reads what it opens (an alert already open for the wallet and rule is not opened again).
      await openAmlAlerts(tx, deps, alerts, now);
      if (steps) {
        await steps.record(tx, chunkResults, now);
        onResults?.(chunkResults);
      }
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

  /**
   * One command's decision: compliance first (a block refuses, a review holds the funds for an operator),
   * then the posting rule over the session's sums. Returns the new transfer and what it writes beside it,
   * or the refusal; either may carry the decision's evidence.
   */
  private decide(
    command: WriterCommand,
    session: PostingSession,
    monitor: AmlBatchMonitor,
    limits: LimitGuard,
    now: Date,
    routeLimits?: RouteLimitGuard,
    pilotCaps?: PilotCapGuard,
  ): Decided {
    if (command.kind === 'refusal') return { outcome: command.error };
    const t = command.transfer;
    const overLimit = limits.check(command) ?? routeLimits?.check(command) ?? pilotCaps?.check(command);
    if (overLimit) return { outcome: overLimit };
    const aml = monitor.evaluate(command, now);
    const compliance = decideTransferCompliance({ screening: command.screening, ...aml });
    const authorization = compliance.outcome === 'block' ? undefined : this.authorize(command, monitor, now);
    // One record per decided transfer: compliance (screening, AML) and the authorization policy together.
    const evidence = (transferId: string | undefined): EvidenceDraft => ({
      organizationId: t.organizationId,
      kind: 'transfer.decision',
      actor: SYSTEM_ACTOR,
      transferId,
      walletId: command.debitAccountId,
      customerId: command.sourceCustomerId,
      data: {
        ...compliance.evidence,
        authorization: authorization
          ? {
              decision: authorization.decision,
              policy_version: authorization.policyVersion,
              rule: authorization.rule,
              matched: authorization.matched,
            }
          : null,
        created_by: t.createdBy,
        amount: formatAmount(t.amountMinor, t.currency),
        currency: t.currency,
      },
    });
    if (compliance.outcome === 'block' || !authorization) {
      return { outcome: complianceBlocked(compliance.blockedBy), evidence: evidence(undefined) };
    }
    if (authorization.decision === 'deny') {
      return { outcome: policyDenied(authorization), evidence: evidence(undefined) };
    }
    const held = compliance.outcome === 'review';
    // A transfer held for review waits for its approval once the review clears.
    const awaitingApproval =
      !held && authorization.decision === 'require_approval' && command.coveredByApproval === undefined;
    const direct = command.settleAtOnce && !held && !awaitingApproval;
    const fee = feeOf(t);
    if (fee > 0n && command.feeAccountId === undefined) throw new Error(`fee of ${t.id} without an account`);
    if (command.released) {
      const creditsWallet = session.account(command.creditAccountId)?.kind === 'wallet';
      const gate = session.release(command.released, {
        source: command.debitAccountId,
        destination: creditsWallet ? command.creditAccountId : undefined,
      });
      if (gate.outcome === 'refuse') return { outcome: refusalError(gate.refusal, 'transfer', gate.side) };
    }
    // The fee rides in the transfer's own entry: held with the amount, posted or released with it.
    const refusal = session.tryPost({
      id: this.deps.newId('journalEntry'),
      organizationId: t.organizationId,
      transferId: t.id,
      kind: direct ? 'direct' : 'hold',
      holdEntryId: null,
      createdAt: now,
      postings: transferPostings(
        direct ? 'posted' : 'pending',
        command.debitAccountId,
        command.creditAccountId,
        t.amountMinor,
        t.currency,
        fee > 0n ? { accountId: command.feeAccountId as string, amountMinor: fee } : undefined,
      ),
    });
    if (refusal) {
      const fromSource = refusal.accountId === command.debitAccountId;
      const param = !fromSource ? 'destination' : refusal.code === 'wallet_not_active' ? 'source' : 'amount';
      return { outcome: refusalError(refusal, 'transfer', param) };
    }
    const approval: Approval | undefined = awaitingApproval
      ? newApproval(this.deps, {
          organizationId: t.organizationId,
          resourceType: 'transfer',
          resourceId: t.id,
          decision: authorization,
          initiatedBy: t.createdBy ?? 'system',
          now,
        })
      : undefined;
    const base: Transfer = {
      ...t,
      createdAt: now,
      updatedAt: now,
      authorization: {
        decision: authorization.decision,
        policyVersion: authorization.policyVersion,
        rule: authorization.rule,
      },
      approvalId: approval?.id ?? command.coveredByApproval ?? null,
    };
    const transfer: Transfer = held
      ? {
          ...base,
          status: 'in_review',
          statusReason: IN_REVIEW_STATUS_REASON,
          ledgerState: 'pending',
          nextRailCheckAt: null,
        }
      : approval
        ? {
            ...base,
            status: 'pending_approval',
            statusReason: AWAITING_APPROVAL_STATUS_REASON,
            ledgerState: 'pending',
            nextRailCheckAt: null,
          }
        : direct
          ? { ...base, status: 'settled', ledgerState: 'posted', settledAt: now }
          : { ...base, status: 'pending', ledgerState: 'pending', nextRailCheckAt: now };
    const events = [transferEvent(this.deps, 'transfer.created', transfer, now)];
    if (approval) events.push(approvalEvent(this.deps, approval, now));
    if (direct) events.push(transferEvent(this.deps, 'transfer.settled', transfer, now));
    const review: ReviewCase | undefined = compliance.review && {
      id: this.deps.newId('review'),
      organizationId: t.organizationId,
      kind: compliance.review.kind,
      status: 'open',
      transferId: t.id,
      customerId: command.sourceCustomerId,
      walletId: command.debitAccountId,
      verificationId: null,
      depositId: null,
      findings: compliance.review.findings,
      note: null,
      decidedBy: null,
      createdAt: now,
      decidedAt: null,
    };
    monitor.accepted(command, transfer, now);
    limits.accepted(command);
    routeLimits?.accepted(command);
    pilotCaps?.accepted(command);
    const alerts = compliance.alerts.map((hit) => ({
      organizationId: t.organizationId,
      transferId: t.id,
      walletId: command.debitAccountId,
      customerId: command.sourceCustomerId,
      hit,
    }));
    return { outcome: { transfer, events }, evidence: evidence(t.id), review, alerts, approval };
  }

  /** The authorization policy's decision, over the facts known with the source wallet locked. */
  private authorize(command: TransferCommand, monitor: AmlBatchMonitor, now: Date): PolicyDecision {
    const t = command.transfer;
    return evaluatePolicy(command.policy, {
      operation: 'transfer',
      facts: {
        amountMinor: t.amountMinor,
        currency: t.currency,
        rail: t.rail,
        destinationType: (t.destination as Destination).type,
        sourceWalletId: command.debitAccountId,
        riskLevel: command.customer?.riskLevel,
        kycStatus: command.customer?.kycStatus,
        counterpartyKnown: monitor.counterpartyKnown(command),
        outgoingWithin: (windowSeconds) => monitor.outgoingWithin(command, windowSeconds, now),
      },
    });
  }
}

/** What deciding one command produced. */
interface Decided {
  outcome: AppError | { transfer: Transfer; events: EventRecord[] };
  evidence?: EvidenceDraft | undefined;
  review?: ReviewCase | undefined;
  alerts?: AmlAlertDraft[] | undefined;
  approval?: Approval | undefined;
}

function policyDenied(decision: PolicyDecision): AppError {
  return new AppError({
    status: 422,
    code: 'policy_denied',
    title: 'Denied by policy',
    detail: `This transfer was denied by the organization's policy (version ${decision.policyVersion}, rule '${decision.rule}'); nothing was written.`,
    param: 'amount',
    extensions: { rule: decision.rule, policy_version: String(decision.policyVersion) },
  });
}

function complianceBlocked(rule: RuleHit | undefined): AppError {
  return new AppError({
    status: 422,
    code: 'compliance_blocked',
    title: 'Blocked by compliance',
    detail: `This transfer was blocked by the organization's AML rule${rule ? ` '${rule.ruleName}'` : ''}; nothing was written. Contact your compliance team.`,
    param: 'amount',
  });
}
