/**
 * The rail worker against slow, failing and misbehaving partners. Two workers share one queue with a lease
 * far shorter than a batch takes at the rail: every transfer must reach the rail once and be paid once.
 * When one call outlasts the lease, the repeated submit carries the same idempotency reference, so an
 * idempotent partner pays once; a partner that answers with a second reference is recorded, not ignored.
 * A failure with one transfer is logged and does not stop the rest of the pass.
 */

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashApiKey } from '../src/domain/apiKeys.ts';
import type { Transfer } from '../src/domain/transferRecord.ts';
import { listTransfers } from '../src/modules/transfers/repository.ts';
import {
  RAIL_REFERENCE_CONFLICT_REASON,
  RAIL_RESULT_TIMEOUT_MS,
  type RailWorkerLog,
  runRailWorkerOnce,
} from '../src/modules/transfers/workers.ts';
import type {
  RailAdapter,
  RailOutcome,
  RailRegistry,
  SubmitRequest,
  SubmitResult,
} from '../src/rails/rail.ts';
import { simulatedRail } from '../src/rails/sandbox.ts';
import { findApiKeyByHash } from '../src/store/repositories/apiKeys.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';
import { mobileMoneyPayout } from './support/payouts.ts';
import { REFUSED_REFERENCE_MESSAGE, refuseRailReferences } from './support/railFaults.ts';

/** Transfers queued before the two workers start. */
const QUEUED_TRANSFERS = 60;
/**
 * The workers' clock moves only when the test partner takes time (see workerClock), so leases run out by
 * what the rail does, not by how busy the machine is. The lease is far shorter than a batch takes at the
 * slow partner (60 × SLOW_SUBMIT_MS) and far longer than one call.
 */
const TEST_LEASE_MS = 300;
const SLOW_SUBMIT_MS = 20;
/** Real time each submit yields, so that the two workers interleave. */
const SUBMIT_YIELD_MS = 1;
/** A call that outlasts its lease many times over. */
const OUTLASTING_SUBMIT_MS = 5_000;
/** How long (real time) an outlasting call waits for the other worker to submit the same transfer. */
const OVERLAP_WAIT_MS = 10_000;
/** Transfers in the outlasting-call cases; the first one's call outlasts its lease. */
const OUTLASTING_TRANSFERS = 6;
/** How long workers get to move every transfer to its outcome. */
const DRAIN_DEADLINE_MS = 60_000;
/** A rail call time-out for the unanswered-call case. */
const TEST_CALL_TIMEOUT_MS = 100;
/** A short real-time lease, for the single-worker retry case. */
const SHORT_LEASE_MS = 50;
/** How often the silent test partner asks to be asked again: well inside RAIL_RESULT_TIMEOUT_MS. */
const SILENT_PARTNER_RECHECK_MS = 20_000;
/** Transfers in the one-failure cases. */
const BATCH_TRANSFERS = 5;
/** Passes in the case whose leases run out at once: each is a new race between the lanes' claims. */
const RACING_PASSES = 40;

const SETTLE_PHONE = '+254700000000';
/** A number the test partners treat specially (throw, never answer, outlast the lease). */
const TROUBLE_PHONE = '+254711111111';

/**
 * How long a submit in the concurrency test waits, at the most, for the others to join it: the lanes start one
 * after another (each claim that finds work adds one), and on a busy machine a fixed pause could end before
 * the last had claimed.
 */
const CONCURRENT_SUBMIT_WAIT_MS = 5_000;
/** How long each submit then stays in flight: long enough for one lane too many to overlap them. */
const CONCURRENT_SUBMIT_OVERLAP_MS = 50;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A clock for the workers that advances only when told. */
function workerClock() {
  let nowMs = Date.now();
  return {
    now: () => new Date(nowMs),
    advance(ms: number) {
      nowMs += ms;
    },
  };
}
type WorkerClock = ReturnType<typeof workerClock>;

interface LogLine {
  level: string;
  message: string;
  fields: Record<string, string>;
}

function captureLog(): { lines: LogLine[]; log: RailWorkerLog } {
  const lines: LogLine[] = [];
  return { lines, log: (level, message, fields) => lines.push({ level, message, fields }) };
}

function everyRail(adapter: RailAdapter): RailRegistry {
  return {
    mobile_money: adapter,
    bank: adapter,
    paybill: adapter,
    till: adapter,
    card: adapter,
    internal: adapter,
    digital_asset: adapter,
  };
}

/**
 * A test partner that counts what it is asked. Idempotent by default: one payout per idempotency
 * reference however often it is submitted. `idempotent: false` makes a new payout on every submit, as a
 * partner that ignores the reference would. Each submit takes `submitMs` on the workers' clock.
 */
function countingRail(options: {
  clock?: WorkerClock;
  submitMs?: number;
  idempotent?: boolean;
  /** Runs before the answer, with the how-manieth submit of this transfer this is. */
  onSubmit?: (request: SubmitRequest, attempt: number) => Promise<void>;
}) {
  const submits = new Map<string, number>();
  const references = new Map<string, string[]>();
  const payouts = new Map<string, string>();
  let payoutCount = 0;
  const adapter: RailAdapter = {
    async submit(request, now): Promise<SubmitResult> {
      const { idempotencyReference, transfer } = request;
      // The worker names the transfer itself as the idempotency reference.
      expect(idempotencyReference).toBe(transfer.id);
      const attempt = (submits.get(transfer.id) ?? 0) + 1;
      submits.set(transfer.id, attempt);
      options.clock?.advance(options.submitMs ?? 0);
      await sleep(SUBMIT_YIELD_MS);
      await options.onSubmit?.(request, attempt);
      let payout = options.idempotent === false ? undefined : payouts.get(idempotencyReference);
      if (payout === undefined) {
        payoutCount += 1;
        payout = `payout_${payoutCount}`;
        payouts.set(idempotencyReference, payout);
        references.set(transfer.id, [...(references.get(transfer.id) ?? []), payout]);
      }
      return { accepted: true, reference: payout, checkAt: now };
    },
    async check(): Promise<RailOutcome> {
      return { kind: 'settled' };
    },
  };
  return { rails: everyRail(adapter), submits, references, payoutsMade: () => payoutCount };
}

/**
 * Makes the first submit of each TROUBLE_PHONE transfer outlast its lease: it takes OUTLASTING_SUBMIT_MS
 * on the workers' clock, and does not answer until the other worker, finding the lease run out, has
 * submitted the same transfer again (or OVERLAP_WAIT_MS passes, and the test fails on the count).
 */
function outlastingFirstSubmit(clock: WorkerClock) {
  const resubmitted = new Map<string, () => void>();
  return async ({ transfer }: SubmitRequest, attempt: number): Promise<void> => {
    if (phoneOf(transfer) !== TROUBLE_PHONE) return;
    if (attempt > 1) {
      resubmitted.get(transfer.id)?.();
      return;
    }
    clock.advance(OUTLASTING_SUBMIT_MS);
    await new Promise<void>((resolve) => {
      resubmitted.set(transfer.id, resolve);
      setTimeout(resolve, OVERLAP_WAIT_MS);
    });
  };
}

interface Queue {
  wallet: string;
  ids: string[];
}

async function queueTransfers(
  t: TestApp,
  count: number,
  phoneOf: (i: number) => string = () => SETTLE_PHONE,
): Promise<Queue> {
  const wallet = await fundedWallet(t, '100000.00');
  // Sent at once, so the ledger writer batches them.
  const created = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      api(t, 'POST', '/v1/transfers', {
        body: { source: wallet, destination: mobileMoney(phoneOf(i)), amount: '10.00', currency: 'KES' },
      }),
    ),
  );
  for (const response of created) expect(response.statusCode, response.body).toBe(201);
  const ids = created.map((response) => response.data.id as string);
  return { wallet, ids };
}

/** The stored records (the rail reference is not on the wire), in the queue's order. */
async function recordsOf(t: TestApp, queue: Queue): Promise<Transfer[]> {
  const key = await findApiKeyByHash(t.deps.store, hashApiKey(t.key));
  if (!key) throw new Error('test key not found');
  const rows = await listTransfers(t.deps.store, key.organizationId, { walletId: queue.wallet }, 1_000);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return queue.ids.map((id) => byId.get(id) as Transfer);
}

/** Still for the worker: not terminal, and not parked for reconciliation. */
const stillQueued = (x: Transfer) =>
  (x.status === 'pending' || x.status === 'processing') && x.statusReason !== RAIL_REFERENCE_CONFLICT_REASON;

/** Runs worker passes until no transfer is left for the worker (bounded by the deadline). */
async function workUntilDone(t: TestApp, queue: Queue, pass: () => Promise<number>): Promise<void> {
  const deadline = Date.now() + DRAIN_DEADLINE_MS;
  while (Date.now() < deadline) {
    if ((await pass()) > 0) continue;
    if (!(await recordsOf(t, queue)).some(stillQueued)) return;
    await sleep(10);
  }
  throw new Error('the workers did not finish before the deadline');
}

/**
 * Two workers share the queue, on the workers' clock with TEST_LEASE_MS leases, until nothing is left
 * for them. Returns the partner (with its counts) and what the workers logged.
 */
async function runTwoWorkers(
  t: TestApp,
  queue: Queue,
  partner: (clock: WorkerClock) => Parameters<typeof countingRail>[0],
) {
  const clock = workerClock();
  const deps = { ...t.deps, now: clock.now };
  const rail = countingRail({ clock, submitMs: SLOW_SUBMIT_MS, ...partner(clock) });
  const { lines, log } = captureLog();
  // One call at a time per worker: each submit advances the shared virtual clock, so calls in flight at
  // once would age every lease together, which real time does not do.
  const pass = () => runRailWorkerOnce(deps, rail.rails, { leaseMs: TEST_LEASE_MS, log, concurrency: 1 });
  await Promise.all([workUntilDone(t, queue, pass), workUntilDone(t, queue, pass)]);
  return { rail, lines };
}

/** OUTLASTING_TRANSFERS queued, the first of which the partners treat as TROUBLE_PHONE. */
const queueWithOneTrouble = (t: TestApp) =>
  queueTransfers(t, OUTLASTING_TRANSFERS, (i) => (i === 0 ? TROUBLE_PHONE : SETTLE_PHONE));

describe.each(BACKENDS)('rail worker on %s', (backend) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startTestApp(backend);
  });
  afterEach(async () => {
    await expectLedgerHealthy(t);
    await t.close();
  });

  it('two workers with a short lease and a slow rail submit each transfer once and pay it once', async () => {
    const queue = await queueTransfers(t, QUEUED_TRANSFERS);
    const { rail, lines } = await runTwoWorkers(t, queue, () => ({}));

    const notOnce = queue.ids.filter((id) => rail.submits.get(id) !== 1);
    expect(notOnce, `${notOnce.length} of ${queue.ids.length} not submitted exactly once`).toEqual([]);
    expect(rail.payoutsMade()).toBe(queue.ids.length);
    for (const x of await recordsOf(t, queue)) {
      expect(x).toMatchObject({
        status: 'settled',
        ledgerState: 'posted',
        railReference: rail.references.get(x.id)?.[0],
      });
    }
    expect(lines).toEqual([]);
  });

  it('a call that outlasts its lease is submitted again under the same reference, and paid once', async () => {
    const queue = await queueWithOneTrouble(t);
    const slow = queue.ids[0] as string;
    const { rail, lines } = await runTwoWorkers(t, queue, (clock) => ({
      onSubmit: outlastingFirstSubmit(clock),
    }));

    // The other worker took over the slow transfer while its first submit was still under way.
    expect(rail.submits.get(slow)).toBe(2);
    for (const x of await recordsOf(t, queue)) {
      expect(rail.references.get(x.id), x.id).toHaveLength(1);
      expect(x).toMatchObject({
        status: 'settled',
        ledgerState: 'posted',
        railReference: rail.references.get(x.id)?.[0],
        statusReason: null,
      });
    }
    expect(lines).toEqual([]);
  });

  it('a second rail reference for one transfer is recorded and logged, never dropped', async () => {
    const queue = await queueWithOneTrouble(t);
    const slow = queue.ids[0] as string;
    const { rail, lines } = await runTwoWorkers(t, queue, (clock) => ({
      idempotent: false,
      onSubmit: outlastingFirstSubmit(clock),
    }));

    const references = rail.references.get(slow) ?? [];
    expect(references).toHaveLength(2);
    for (const x of await recordsOf(t, queue)) {
      if (x.id !== slow) {
        expect(x).toMatchObject({ status: 'settled', railReference: rail.references.get(x.id)?.[0] });
        continue;
      }
      // The reference recorded first stays, the transfer says why it needs a person, and the log names both.
      expect(references).toContain(x.railReference);
      expect(x).toMatchObject({ statusReason: RAIL_REFERENCE_CONFLICT_REASON, nextRailCheckAt: null });
      // Processing with its hold in place, or settled by a check on the first reference before the
      // second arrived; either way off the queue until someone reconciles it with the partner.
      expect(['processing', 'settled']).toContain(x.status);
    }
    const stored = (await recordsOf(t, queue))[0] as Transfer;
    expect(lines).toEqual([
      {
        level: 'error',
        message: expect.stringContaining('second reference'),
        fields: {
          transfer_id: slow,
          rail: 'mobile_money',
          rail_reference: stored.railReference,
          reported_reference: references.find((r) => r !== stored.railReference),
        },
      },
    ]);
  });

  it('keeps at most its concurrency of rail calls in flight, and makes every call', async () => {
    const queue = await queueTransfers(t, BATCH_TRANSFERS);
    let inFlight = 0;
    let most = 0;
    // The first submits wait for each other until the pass's concurrency is in flight (or the wait runs out);
    // the rest go straight through.
    let gathered = false;
    const rail = countingRail({
      onSubmit: async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        const waitUntil = Date.now() + CONCURRENT_SUBMIT_WAIT_MS;
        while (!gathered && inFlight < 3 && Date.now() < waitUntil) await sleep(5);
        gathered = true;
        // Time for a lane beyond the concurrency, if the pass opened one, to join them.
        await sleep(CONCURRENT_SUBMIT_OVERLAP_MS);
        inFlight -= 1;
      },
    });
    expect(await runRailWorkerOnce(t.deps, rail.rails, { concurrency: 3 })).toBe(BATCH_TRANSFERS);
    expect(most).toBe(3);
    expect(rail.payoutsMade()).toBe(BATCH_TRANSFERS);
    for (const x of await recordsOf(t, queue)) expect(x.railReference).toMatch(/^payout_/);
  });

  it('claims once in a pass over an empty queue, whatever its concurrency', async () => {
    let transactions = 0;
    const store = new Proxy(t.deps.store, {
      get(target, property) {
        if (property === 'transaction') {
          return (fn: Parameters<typeof target.transaction>[0]) => {
            transactions += 1;
            return target.transaction(fn);
          };
        }
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const rail = countingRail({});
    expect(await runRailWorkerOnce({ ...t.deps, store }, rail.rails, { concurrency: 8 })).toBe(0);
    expect(transactions).toBe(1);
    // With work queued, the pass widens to its concurrency as its claims find transfers.
    await queueTransfers(t, BATCH_TRANSFERS);
    transactions = 0;
    expect(await runRailWorkerOnce({ ...t.deps, store }, rail.rails, { concurrency: 8 })).toBe(
      BATCH_TRANSFERS,
    );
    expect(rail.payoutsMade()).toBe(BATCH_TRANSFERS);
  });

  it('times out a payout the partner leaves unanswered past RAIL_RESULT_TIMEOUT_MS, keeps its hold, and asks on', async () => {
    const queue = await queueTransfers(t, 1);
    const clock = workerClock();
    const deps = { ...t.deps, now: clock.now };
    let checks = 0;
    // Accepts the payout and never decides it: every status enquiry says it is still processing.
    const silent: RailAdapter = {
      submit: async (request, now) => ({
        accepted: true,
        reference: `payout_${request.transfer.id}`,
        checkAt: new Date(now.getTime() + SILENT_PARTNER_RECHECK_MS),
      }),
      check: async (_transfer, now) => {
        checks += 1;
        return { kind: 'processing', checkAt: new Date(now.getTime() + SILENT_PARTNER_RECHECK_MS) };
      },
    };
    const pass = () => runRailWorkerOnce(deps, everyRail(silent));
    const reasonNow = async () => ((await recordsOf(t, queue))[0] as Transfer).statusReason;
    await pass();
    clock.advance(SILENT_PARTNER_RECHECK_MS);
    await pass();
    expect(checks).toBe(1);
    expect(await reasonNow()).toBeNull();
    clock.advance(RAIL_RESULT_TIMEOUT_MS - SILENT_PARTNER_RECHECK_MS);
    await pass();
    expect(checks).toBe(2);
    expect(await reasonNow()).toBe('rail_timeout');
    const [timedOut] = await recordsOf(t, queue);
    expect(timedOut).toMatchObject({ status: 'processing', railReference: `payout_${timedOut?.id}` });
    expect(timedOut?.nextRailCheckAt?.getTime()).toBe(clock.now().getTime() + SILENT_PARTNER_RECHECK_MS);
    expect(await balanceOf(t, queue.wallet)).toMatchObject({ pending: '10.00' });
  });

  it('logs a rail error with the transfer and rail, and goes on with the rest of the pass', async () => {
    const queue = await queueTransfers(t, BATCH_TRANSFERS, (i) => (i === 1 ? TROUBLE_PHONE : SETTLE_PHONE));
    const trouble = queue.ids[1] as string;
    const rail = countingRail({
      onSubmit: async ({ transfer }) => {
        if (phoneOf(transfer) === TROUBLE_PHONE) throw new Error('partner answered 502');
      },
    });
    const { lines, log } = captureLog();
    expect(await runRailWorkerOnce(t.deps, rail.rails, { log })).toBe(BATCH_TRANSFERS);

    expect(lines).toEqual([
      {
        level: 'error',
        message: 'rail call failed',
        fields: { transfer_id: trouble, rail: 'mobile_money', error: 'partner answered 502' },
      },
    ]);
    for (const x of await recordsOf(t, queue)) {
      expect(x).toMatchObject(
        x.id === trouble
          ? { status: 'processing', railReference: null, statusReason: 'rail_unavailable' }
          : { status: 'processing', railReference: rail.references.get(x.id)?.[0] },
      );
    }
  });

  it('gives up on a rail call that does not answer in time, and goes on with the rest of the pass', async () => {
    const queue = await queueTransfers(t, BATCH_TRANSFERS, (i) => (i === 2 ? TROUBLE_PHONE : SETTLE_PHONE));
    const trouble = queue.ids[2] as string;
    const rail = countingRail({
      onSubmit: ({ transfer }) =>
        phoneOf(transfer) === TROUBLE_PHONE ? new Promise(() => {}) : Promise.resolve(),
    });
    const { lines, log } = captureLog();
    const count = await runRailWorkerOnce(t.deps, rail.rails, { log, callTimeoutMs: TEST_CALL_TIMEOUT_MS });
    expect(count).toBe(BATCH_TRANSFERS);

    expect(lines).toEqual([
      {
        level: 'error',
        message: 'rail call failed',
        fields: {
          transfer_id: trouble,
          rail: 'mobile_money',
          error: `the rail did not answer within ${TEST_CALL_TIMEOUT_MS} ms`,
        },
      },
    ]);
    for (const x of await recordsOf(t, queue)) {
      expect(x).toMatchObject(
        x.id === trouble
          ? { status: 'processing', railReference: null, statusReason: 'rail_unavailable' }
          : { status: 'processing', railReference: rail.references.get(x.id)?.[0] },
      );
    }
  });

  it('steps each transfer once a pass even when its lease runs out within the pass', async () => {
    const queue = await queueTransfers(t, BATCH_TRANSFERS);
    // Every lease has run out the moment it is taken, and every answer asks to be asked again at once: the
    // lanes' claims race for rows made due again by another lane's claim or answer.
    let steps = new Map<string, number>();
    const step = (id: string) => steps.set(id, (steps.get(id) ?? 0) + 1);
    const adapter: RailAdapter = {
      async submit({ transfer }, now) {
        step(transfer.id);
        await sleep(SUBMIT_YIELD_MS);
        return { accepted: true, reference: `payout_${transfer.id}`, checkAt: now };
      },
      async check(transfer, now) {
        step(transfer.id);
        await sleep(SUBMIT_YIELD_MS);
        return { kind: 'processing', checkAt: now };
      },
    };
    for (let pass = 0; pass < RACING_PASSES; pass++) {
      steps = new Map();
      const count = await runRailWorkerOnce(t.deps, everyRail(adapter), { leaseMs: 0 });
      expect(count).toBe(BATCH_TRANSFERS);
      expect([...steps.values()].filter((n) => n !== 1)).toEqual([]);
      expect(steps.size).toBe(BATCH_TRANSFERS);
    }
    expect(queue.ids).toHaveLength(BATCH_TRANSFERS);
  });

  it('logs a transfer whose answer cannot be recorded, and records the rest of the pass', async () => {
    const queue = await queueTransfers(t, BATCH_TRANSFERS);
    const refused = queue.ids[0] as string;
    // The database refuses to record a reference for one transfer: recording its answer throws.
    const lift = await refuseRailReferences(t.db.store, refused);
    const rail = countingRail({});
    const { lines, log } = captureLog();
    const pass = () => runRailWorkerOnce(t.deps, rail.rails, { log, leaseMs: SHORT_LEASE_MS });
    expect(await pass()).toBe(BATCH_TRANSFERS);
    expect(lines).toEqual([
      {
        level: 'error',
        message: 'could not record the rail answer',
        fields: { transfer_id: refused, rail: 'mobile_money', error: REFUSED_REFERENCE_MESSAGE },
      },
    ]);
    for (const x of await recordsOf(t, queue)) {
      expect(x.status).toBe('processing');
      expect(x.railReference === null, x.id).toBe(x.id === refused);
    }

    // Once the database accepts it again, the transfer is submitted again under the same reference and
    // the partner answers with the payout it already made.
    await lift();
    await workUntilDone(t, queue, pass);
    expect(rail.submits.get(refused)).toBe(2);
    expect(rail.references.get(refused)).toHaveLength(1);
    for (const x of await recordsOf(t, queue)) expect(x.status).toBe('settled');
    expect(lines).toHaveLength(1);
  });
});

describe('the sandbox rail', () => {
  it('answers a repeated submit with the same reference, and another reference with another payout', async () => {
    const rail = simulatedRail();
    const now = new Date();
    const t1 = queueless('tr_one');
    const first = await rail.submit({ idempotencyReference: 'tr_one', transfer: t1 }, now);
    const again = await rail.submit({ idempotencyReference: 'tr_one', transfer: t1 }, now);
    const other = await rail.submit({ idempotencyReference: 'tr_two', transfer: t1 }, now);
    expect(first).toMatchObject({ accepted: true });
    expect(again).toEqual(first);
    expect(other).toMatchObject({ accepted: true });
    expect((other as { reference: string }).reference).not.toBe((first as { reference: string }).reference);
  });
});

function phoneOf(transfer: Transfer): string | undefined {
  return 'phone' in transfer.destination ? transfer.destination.phone : undefined;
}

/** A transfer record for calling the simulator directly. */
function queueless(id: string): Transfer {
  return mobileMoneyPayout(SETTLE_PHONE, 'mpesa', {
    id,
    organizationId: 'org_test',
    sourceWalletId: null,
    amountMinor: 1_000n,
  });
}
