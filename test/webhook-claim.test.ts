/**
 * The dispatcher's claim, on its own: oldest due first across subscriptions, at most the in-flight limit per
 * subscription counted across claims, leases that ran out taken back (and counted) before newer rows,
 * disabled and deleted subscriptions' backlogs skipped without using up the batch, many subscriptions with
 * small backlogs, rows another dispatcher holds skipped, and a dispatcher's queue of several rounds. Deliveries are made through the API with a
 * stepped clock, so their due times are known.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { type ClaimedDelivery, claimDueDeliveries } from '../src/modules/webhooks/repository/claims.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';

const LIMIT = 4;
const SECOND_MS = 1_000;
const LEASE_MS = 60_000;

describe.each(BACKENDS)('webhook claim on %s', (backend) => {
  let t: TestApp;
  let created: { id: string; key: string }[] = [];
  let organizations = 0;
  /** Due times are counted from here, an hour back, so every delivery made in a test is due by now. */
  let base: number;

  beforeAll(async () => {
    // Subscriptions point at 127.0.0.1: local development's opt-in.
    t = await startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true });
  });
  afterAll(async () => {
    await t.close();
  });
  afterEach(async () => {
    // Deleted subscriptions are never claimed, so each test sees only its own deliveries.
    for (const s of created) await api(t, 'DELETE', `/v1/webhook-subscriptions/${s.id}`, { key: s.key });
    created = [];
  });

  async function organization(): Promise<string> {
    base = Date.now() - 3_600_000;
    return (await issueApiKey(t.deps, { organizationName: `Claim ${backend} ${++organizations}` })).key;
  }

  async function subscribe(key: string, events: string[]): Promise<string> {
    const response = await api(t, 'POST', '/v1/webhook-subscriptions', {
      key,
      body: { url: 'http://127.0.0.1:9/hooks', events },
    });
    expect(response.statusCode, response.body).toBe(201);
    created.push({ id: response.data.id, key });
    return response.data.id;
  }

  /** An event whose deliveries fall due `seconds` after base. */
  async function emitAt(key: string, seconds: number, type = 'transfer.created'): Promise<string> {
    const now = t.deps.now;
    t.deps.now = () => new Date(base + seconds * SECOND_MS);
    try {
      const response = await api(t, 'POST', '/v1/sandbox/events', { key, body: { type } });
      expect(response.statusCode, response.body).toBe(201);
      return response.data.id;
    } finally {
      t.deps.now = now;
    }
  }

  async function claim(rowsMax = 50, at = new Date(), leaseMs = LEASE_MS): Promise<ClaimedDelivery[]> {
    return t.deps.store.transaction((tx) =>
      claimDueDeliveries(tx, at, new Date(at.getTime() + leaseMs), rowsMax, LIMIT),
    );
  }

  /** What a claim at `at` would take, rolled back. */
  async function peek(at: Date): Promise<ClaimedDelivery[]> {
    let claimed: ClaimedDelivery[] = [];
    const rollback = new Error('rollback');
    await t.deps.store
      .transaction(async (tx) => {
        claimed = await claimDueDeliveries(tx, at, new Date(at.getTime() + LEASE_MS), 50, LIMIT);
        throw rollback;
      })
      .catch((error: unknown) => {
        if (error !== rollback) throw error;
      });
    return claimed;
  }

  /** The claimed deliveries' events by name, sorted: a claim returns its rows in no particular order. */
  const names = (claimed: readonly ClaimedDelivery[], events: Record<string, string>) => {
    const byId = Object.fromEntries(Object.entries(events).map(([name, id]) => [id, name]));
    return claimed.map((d) => byId[d.eventId] ?? d.eventId).sort();
  };

  it('claims the oldest due first, at most the limit per subscription, more only as slots free', async () => {
    const key = await organization();
    await subscribe(key, ['transfer.created']);
    await subscribe(key, ['transfer.settled']);
    await subscribe(key, ['transfer.failed']);
    const events: Record<string, string> = {};
    for (const [name, seconds, type] of [
      ['a1', 1, 'transfer.created'],
      ['a2', 2, 'transfer.created'],
      ['a3', 3, 'transfer.created'],
      ['a4', 4, 'transfer.created'],
      ['a5', 5, 'transfer.created'],
      ['a6', 6, 'transfer.created'],
      ['b1', 2.5, 'transfer.settled'],
      ['b2', 7, 'transfer.settled'],
      ['c1', 0.5, 'transfer.failed'],
    ] as const) {
      events[name] = await emitAt(key, seconds, type);
    }
    // Not due yet at base + 3.5 s.
    expect(names(await peek(new Date(base + 3_500)), events)).toEqual(['a1', 'a2', 'a3', 'b1', 'c1']);

    expect(names(await claim(3), events)).toEqual(['a1', 'a2', 'c1']);
    // a has two in flight from the claim before: two more of its rows, and all of b's.
    expect(names(await claim(), events)).toEqual(['a3', 'a4', 'b1', 'b2']);
    expect(await claim()).toEqual([]);
  });

  it('takes back leases that ran out before newer rows, and counts them against the limit', async () => {
    const key = await organization();
    await subscribe(key, ['transfer.created']);
    const events: Record<string, string> = {};
    for (let i = 1; i <= LIMIT + 2; i++) events[`e${i}`] = await emitAt(key, i);
    const first = await claim(50, new Date(), 1_000);
    expect(names(first, events)).toEqual(['e1', 'e2', 'e3', 'e4']);
    expect(first.every((d) => d.attempts === 1)).toBe(true);
    // Still leased a moment later: nothing more for this subscription.
    expect(await claim(50, new Date(Date.now() + 100))).toEqual([]);
    // After the leases ran out the same four come back first (a second attempt each); e5 and e6 wait.
    const again = await claim(50, new Date(Date.now() + 5_000));
    expect(names(again, events)).toEqual(['e1', 'e2', 'e3', 'e4']);
    expect(again.every((d) => d.attempts === 2)).toBe(true);
    expect(await claim(50, new Date(Date.now() + 5_000))).toEqual([]);
  });

  it("skips disabled and deleted subscriptions' backlogs without using up the batch", async () => {
    const key = await organization();
    const paused = await subscribe(key, ['transfer.settled']);
    const removed = await subscribe(key, ['transfer.failed']);
    await subscribe(key, ['transfer.created']);
    const events: Record<string, string> = {};
    for (let i = 1; i <= 6; i++) {
      await emitAt(key, i, 'transfer.settled');
      await emitAt(key, i, 'transfer.failed');
    }
    events.live1 = await emitAt(key, 10);
    events.live2 = await emitAt(key, 11);
    await api(t, 'PATCH', `/v1/webhook-subscriptions/${paused}`, { key, body: { status: 'disabled' } });
    await api(t, 'DELETE', `/v1/webhook-subscriptions/${removed}`, { key });
    expect(names(await claim(2), events)).toEqual(['live1', 'live2']);
  });

  it('with many subscriptions each a little behind, claims in due order until every row is taken', async () => {
    const key = await organization();
    const subscriptions = 30;
    for (let i = 0; i < subscriptions; i++) await subscribe(key, ['*']);
    const first = await emitAt(key, 1);
    const second = await emitAt(key, 2);
    const batches = [await claim(20), await claim(20), await claim(20), await claim(20)];
    expect(batches.map((b) => b.length)).toEqual([20, 20, 20, 0]);
    expect(new Set(batches.flat().map((d) => d.id)).size).toBe(2 * subscriptions);
    // Every delivery of the older event before any of the newer one.
    const counts = batches.map((b) => [first, second].map((e) => b.filter((d) => d.eventId === e).length));
    expect(counts).toEqual([
      [20, 0],
      [10, 10],
      [0, 20],
      [0, 0],
    ]);
  });

  it("a dispatcher's queue: several rounds leased a round apart, topped up by its owner, closed to others", async () => {
    const key = await organization();
    await subscribe(key, ['transfer.created']);
    const events: Record<string, string> = {};
    for (let i = 1; i <= 10; i++) events[`e${i}`] = await emitAt(key, i);
    const roundMs = 10_000;
    const queueOf = (owner: string) => ({ owner, sendsAtOnce: 2, roundMs });
    const claimAs = (owner: string, at = new Date()) =>
      t.deps.store.transaction((tx) =>
        claimDueDeliveries(tx, at, new Date(at.getTime() + LEASE_MS), 50, 8, queueOf(owner)),
      );
    const leases = async (ids: readonly string[]) =>
      (
        await t.deps.store.query(
          'SELECT id, lease_expires_at, lease_owner FROM webhook_deliveries WHERE id = ANY($1::text[])',
          [ids],
        )
      ).map((row) => ({
        id: String(row.id),
        lease: new Date(row.lease_expires_at as string).getTime(),
        owner: row.lease_owner,
      }));

    const at = new Date();
    const first = await t.deps.store.transaction((tx) =>
      claimDueDeliveries(tx, at, new Date(at.getTime() + LEASE_MS), 50, 8, queueOf('a')),
    );
    expect(names(first, events)).toEqual(['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8']);
    // Two sends at once: each pair in due order is leased one round (roundMs) after the pair before it.
    const byEvent = new Map(first.map((d) => [d.id, d.eventId]));
    const leased = (await leases(first.map((d) => d.id))).sort((x, y) => x.lease - y.lease);
    expect(leased.map((l) => l.owner)).toEqual(Array(8).fill('a'));
    const order = Object.entries(events).map(([, id]) => id);
    leased.forEach((l, i) => {
      expect(order.indexOf(byEvent.get(l.id) as string)).toBe(i);
      expect(l.lease).toBe(at.getTime() + LEASE_MS + Math.floor(i / 2) * roundMs);
    });

    // Another dispatcher gets none of this subscription's rows while these leases live.
    expect(await claimAs('b')).toEqual([]);
    // The owner has its queue full; one finished frees room for one more.
    expect(await claimAs('a')).toEqual([]);
    const done = first[0] as ClaimedDelivery;
    await t.deps.store.query(
      "UPDATE webhook_deliveries SET status = 'succeeded', lease_expires_at = NULL WHERE id = $1",
      [done.id],
    );
    expect(names(await claimAs('a'), events)).toEqual(['e9']);
    expect(await claimAs('b')).toEqual([]);

    // Once every lease has run out, another dispatcher takes the rows back.
    const later = new Date(at.getTime() + LEASE_MS + 10 * roundMs);
    expect((await claimAs('b', later)).length).toBe(8);
  });

  it("a queue's rows come back in the order they are sent in, each leased for its round, whatever their ids", async () => {
    const key = await organization();
    await subscribe(key, ['transfer.created']);
    // Made oldest first, due newest first: id order is the reverse of due order.
    const byDue: string[] = [];
    for (let i = 8; i >= 1; i--) byDue.unshift(await emitAt(key, i));
    const at = new Date();
    const claimed = await t.deps.store.transaction((tx) =>
      claimDueDeliveries(tx, at, new Date(at.getTime() + LEASE_MS), 50, 8, {
        owner: 'a',
        sendsAtOnce: 2,
        roundMs: 10_000,
      }),
    );
    expect(claimed.map((d) => d.eventId)).toEqual(byDue);
    const leases = await t.deps.store.query(
      'SELECT id, lease_expires_at FROM webhook_deliveries WHERE id = ANY($1::text[])',
      [claimed.map((d) => d.id)],
    );
    const leaseOf = new Map(
      leases.map((r) => [String(r.id), new Date(r.lease_expires_at as string).getTime()]),
    );
    expect(claimed.map((d) => (leaseOf.get(d.id) as number) - at.getTime() - LEASE_MS)).toEqual([
      0, 0, 10_000, 10_000, 20_000, 20_000, 30_000, 30_000,
    ]);
  });

  it.skipIf(backend === 'pglite')('skips rows another dispatcher holds until it lets them go', async () => {
    const key = await organization();
    await subscribe(key, ['transfer.created']);
    const events: Record<string, string> = {};
    for (let i = 1; i <= 3; i++) events[`e${i}`] = await emitAt(key, i);
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked: () => void = () => {};
    const lockTaken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    // Another dispatcher's claim, not yet committed: its rows are locked.
    const other = t.deps.store.transaction(async (tx) => {
      const mine = await claimDueDeliveries(tx, new Date(), new Date(Date.now() + LEASE_MS), 1, LIMIT);
      locked();
      await held;
      return mine;
    });
    try {
      await lockTaken;
      expect(names(await claim(), events)).toEqual(['e2', 'e3']);
    } finally {
      release();
    }
    expect(names(await other, events)).toEqual(['e1']);
  });
});
