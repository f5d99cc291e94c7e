/**
 * The history lists' filters as the API answers them: `created[gte]` and `created[lte]` inclusive to the
 * millisecond on every list, even for rows whose id was made on a clock reading away from their created_at
 * (the lists narrow created ranges by id, so this is where a bound too tight would lose rows); pages under
 * filters without gaps or repeats (transfers of a wallet on either side, ledger entries of a wallet); and
 * recover's `since`, inclusive likewise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monotonicIdGenerator } from '../src/app/deps.ts';
import {
  api,
  BACKENDS,
  createCustomer,
  newOrganizationKey,
  startTestApp,
  type TestApp,
} from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
/** Where ids' clock reading may lie from created_at, well inside what the lists allow for. */
const ID_SKEW_MS = 30 * MINUTE_MS;

interface Item {
  id: string;
  created_at: string;
}

describe.each(BACKENDS)('history lists on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    // Recover needs a subscription; it points at 127.0.0.1: local development's opt-in.
    t = await startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true });
  });
  afterAll(async () => {
    await expectLedgerHealthy(t);
    await t.close();
  });

  /** Runs fn with the use cases' clock stopped at `atMs` and ids made on a clock `idSkewMs` away from it. */
  async function at<T>(atMs: number, idSkewMs: number, fn: () => Promise<T>): Promise<T> {
    const { now, newId } = t.deps;
    t.deps.now = () => new Date(atMs);
    t.deps.newId = monotonicIdGenerator(() => atMs + idSkewMs);
    try {
      return await fn();
    } finally {
      t.deps.now = now;
      t.deps.newId = newId;
    }
  }

  /** Every item of a list, following next_cursor with pages of `limit`, checking each page's cursor. */
  async function everyPage(key: string, path: string, limit = 100): Promise<Item[]> {
    const items: Item[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 100; page++) {
      const separator = path.includes('?') ? '&' : '?';
      const after: string = cursor ? `&starting_after=${cursor}` : '';
      const response = await api(t, 'GET', `${path}${separator}limit=${limit}${after}`, { key });
      expect(response.statusCode, `${path}: ${response.body}`).toBe(200);
      items.push(...response.data.data);
      expect(response.data.next_cursor).toBe(response.data.has_more ? response.data.data.at(-1).id : null);
      cursor = response.data.next_cursor;
      if (!cursor) return items;
    }
    throw new Error(`${path} did not end`);
  }

  const ids = (items: readonly Item[]) => items.map((i) => i.id);
  const iso = (ms: number) => encodeURIComponent(new Date(ms).toISOString());

  it('created bounds are inclusive to the millisecond on every list, whatever clock made the ids', async () => {
    const key = await newOrganizationKey(t);
    const when = Math.floor(Date.now() / 1000) * 1000 - 10 * DAY_MS;
    // At `when` with ids half an hour ahead (a clock stepped back), a millisecond later with ids half an hour
    // behind (an id made long before its row was written): id order and creation order disagree.
    const make = async () => {
      const wallet = await fundedWallet(t, '50.00', 'KES', key);
      const subscription = await api(t, 'POST', '/v1/webhook-subscriptions', {
        key,
        body: { url: 'http://127.0.0.1:9/hooks', events: ['*'] },
      });
      expect(subscription.statusCode, subscription.body).toBe(201);
      return wallet;
    };
    await at(when, ID_SKEW_MS, make);
    await at(when + 1, -ID_SKEW_MS, make);

    for (const list of [
      '/v1/customers',
      '/v1/wallets',
      '/v1/transfers',
      '/v1/events',
      '/v1/ledger/entries',
      '/v1/webhook-subscriptions',
    ]) {
      const all = await everyPage(key, list);
      const createdAt = (ms: number) => all.filter((i) => i.created_at === new Date(ms).toISOString());
      const first = createdAt(when);
      const second = createdAt(when + 1);
      expect(first.length, list).toBeGreaterThan(0);
      expect(second.length, list).toBeGreaterThan(0);
      expect(first.length + second.length, list).toBe(all.length);
      const query = (q: string) => everyPage(key, `${list}?${q}`);
      expect(ids(await query(`created[gte]=${iso(when)}&created[lte]=${iso(when)}`)), list).toEqual(
        ids(first),
      );
      expect(ids(await query(`created[gte]=${iso(when + 1)}&created[lte]=${iso(when + 1)}`)), list).toEqual(
        ids(second),
      );
      expect(ids(await query(`created[gte]=${iso(when)}`)), list).toEqual(ids(all));
      expect(ids(await query(`created[lte]=${iso(when + 1)}`)), list).toEqual(ids(all));
      expect(ids(await query(`created[gte]=${iso(when + 1)}`)), list).toEqual(ids(second));
      expect(ids(await query(`created[lte]=${iso(when)}`)), list).toEqual(ids(first));
      expect(await query(`created[lte]=${iso(when - 1)}`), list).toEqual([]);
      expect(await query(`created[gte]=${iso(when + 2)}`), list).toEqual([]);
      // One item a page through the range: the same items in the same order.
      const paged = await everyPage(
        key,
        `${list}?created[gte]=${iso(when)}&created[lte]=${iso(when + 1)}`,
        1,
      );
      expect(ids(paged), list).toEqual(ids(all));
    }
  });

  it("pages a wallet's transfers, as source or destination, under status and created filters", async () => {
    const key = await newOrganizationKey(t);
    const mine = await fundedWallet(t, '500.00', 'KES', key);
    const other = await fundedWallet(t, '500.00', 'KES', key);
    const third = await fundedWallet(t, '500.00', 'KES', key);
    const internal = (source: string, destination: string) =>
      api(t, 'POST', '/v1/transfers', {
        key,
        body: { source, destination, amount: '1.00', currency: 'KES', rail: 'internal' },
      });
    for (const [source, destination] of [
      [mine, other],
      [other, mine],
      [third, other],
      [mine, third],
      [third, mine],
      [other, third],
    ] as const) {
      expect((await internal(source, destination)).statusCode).toBe(201);
    }
    const payout = await api(t, 'POST', '/v1/transfers', {
      key,
      body: { source: mine, destination: mobileMoney('+254700000001'), amount: '2.00', currency: 'KES' },
    });
    expect(payout.data.status).toBe('pending');

    const all = (await everyPage(key, '/v1/transfers')) as (Item & {
      source: string | null;
      destination: { wallet?: string };
      status: string;
    })[];
    const touches = all.filter((x) => x.source === mine || x.destination.wallet === mine);
    // Funding, two out, two in, the payout.
    expect(touches).toHaveLength(6);
    expect(ids(await everyPage(key, `/v1/transfers?wallet=${mine}`, 1))).toEqual(ids(touches));
    expect(ids(await everyPage(key, `/v1/transfers?wallet=${mine}&status=settled`, 2))).toEqual(
      ids(touches.filter((x) => x.status === 'settled')),
    );
    expect(ids(await everyPage(key, `/v1/transfers?wallet=${mine}&status=pending`, 1))).toEqual([
      payout.data.id,
    ]);
    const middle = touches[2];
    if (!middle) throw new Error('too few transfers');
    expect(
      ids(
        await everyPage(
          key,
          `/v1/transfers?wallet=${mine}&created[lte]=${iso(Date.parse(middle.created_at))}`,
          1,
        ),
      ),
    ).toEqual(ids(touches.filter((x) => x.created_at <= middle.created_at)));
  });

  it("pages a wallet's ledger entries under created and transfer filters", async () => {
    const key = await newOrganizationKey(t);
    const mine = await fundedWallet(t, '500.00', 'KES', key);
    const other = await fundedWallet(t, '500.00', 'KES', key);
    for (const [source, destination] of [
      [mine, other],
      [other, mine],
    ] as const) {
      const moved = await api(t, 'POST', '/v1/transfers', {
        key,
        body: { source, destination, amount: '3.00', currency: 'KES', rail: 'internal' },
      });
      expect(moved.statusCode).toBe(201);
    }
    const payout = await api(t, 'POST', '/v1/transfers', {
      key,
      body: { source: mine, destination: mobileMoney('+254700000002'), amount: '4.00', currency: 'KES' },
    });
    expect((await api(t, 'POST', `/v1/transfers/${payout.data.id}/cancel`, { key })).statusCode).toBe(200);

    const all = (await everyPage(key, '/v1/ledger/entries')) as (Item & {
      transfer: string;
      postings: { account: string }[];
    })[];
    const touches = all.filter((e) => e.postings.some((p) => p.account === mine));
    // Funding, out, in, the payout's hold and its void.
    expect(touches).toHaveLength(5);
    expect(ids(await everyPage(key, `/v1/ledger/entries?wallet=${mine}`, 1))).toEqual(ids(touches));
    expect(
      ids(await everyPage(key, `/v1/ledger/entries?wallet=${mine}&transfer=${payout.data.id}`, 1)),
    ).toEqual(ids(touches.filter((e) => e.transfer === payout.data.id)));
    const newest = touches[0];
    if (!newest) throw new Error('no entries');
    expect(
      ids(
        await everyPage(
          key,
          `/v1/ledger/entries?wallet=${mine}&created[gte]=${iso(Date.parse(newest.created_at))}`,
          1,
        ),
      ),
    ).toEqual(ids(touches.filter((e) => e.created_at >= newest.created_at)));
    const owner = await createCustomer(t, key);
    const unused = await api(t, 'POST', '/v1/wallets', { key, body: { owner, currency: 'KES' } });
    expect(await everyPage(key, `/v1/ledger/entries?wallet=${unused.data.id}`)).toEqual([]);
  });

  it('recover re-sends events created at or after since, to the millisecond, whatever clock made their ids', async () => {
    const key = await newOrganizationKey(t);
    const subscription = await api(t, 'POST', '/v1/webhook-subscriptions', {
      key,
      body: { url: 'http://127.0.0.1:9/hooks', events: ['transfer.created'] },
    });
    expect(subscription.statusCode, subscription.body).toBe(201);
    const when = Date.now() - 2 * DAY_MS;
    const emit = () => api(t, 'POST', '/v1/sandbox/events', { key, body: { type: 'transfer.created' } });
    await at(when - 1, ID_SKEW_MS, emit);
    await at(when, -ID_SKEW_MS, emit);
    await at(when, ID_SKEW_MS, emit);
    await at(when + 1, -ID_SKEW_MS, emit);
    const recover = async (sinceMs: number) => {
      const response = await api(t, 'POST', `/v1/webhook-subscriptions/${subscription.data.id}/recover`, {
        key,
        body: { since: new Date(sinceMs).toISOString() },
      });
      expect(response.statusCode, response.body).toBe(202);
      return response.data.requeued;
    };
    expect(await recover(when - 1)).toBe(4);
    expect(await recover(when)).toBe(3);
    expect(await recover(when + 1)).toBe(1);
    expect(await recover(when + 2)).toBe(0);
  });
});
