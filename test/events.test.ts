/**
 * Events through HTTP: every transfer transition writes exactly its event with the spec's 2.4 payload,
 * events are scoped to the organization, and the list filters and pages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION } from '../src/domain/version.ts';
import { api, BACKENDS, newOrganizationKey, startTestApp, type TestApp } from './support/harness.ts';
import { drainRails, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';

const EVENTS_PAGE_MAX = 100;
const UNKNOWN_EVENT_ID = 'evt_01m80v1f31hmw57sgkdkcnyxra';

/** A resource's events, oldest first. */
async function eventsAbout(t: TestApp, resource: string, key = t.key): Promise<any[]> {
  const response = await api(t, 'GET', `/v1/events?resource=${resource}&limit=${EVENTS_PAGE_MAX}`, { key });
  expect(response.statusCode).toBe(200);
  expect(response.data.has_more).toBe(false);
  return [...response.data.data].reverse();
}

async function typesAbout(t: TestApp, resource: string): Promise<string[]> {
  return (await eventsAbout(t, resource)).map((e) => e.type);
}

async function transferTo(t: TestApp, wallet: string, destination: unknown, amount = '100.00') {
  const response = await api(t, 'POST', '/v1/transfers', {
    body: { source: wallet, destination, amount, currency: 'KES', metadata: { customer_ref: 'INV-7' } },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.data;
}

describe.each(BACKENDS)('events on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(async () => {
    await expectLedgerHealthy(t);
    await t.close();
  });

  it('a rail transfer that settles emits created, processing, settled, each with the 2.4 payload', async () => {
    const wallet = await fundedWallet(t, '1000.00');
    const transfer = await transferTo(t, wallet, mobileMoney('+254700000000'), '250.00');
    await drainRails(t);
    const events = await eventsAbout(t, transfer.id);
    expect(events.map((e) => e.type)).toEqual([
      'transfer.created',
      'transfer.processing',
      'transfer.settled',
    ]);
    const states = [
      ['pending', 'pending'],
      ['processing', 'pending'],
      ['settled', 'posted'],
    ];
    events.forEach((event, i) => {
      expect(Object.keys(event).sort()).toEqual(
        ['api_version', 'created_at', 'data', 'environment', 'id', 'object', 'product', 'type'].sort(),
      );
      expect(event.id).toMatch(/^evt_[0-9a-z]{26}$/);
      expect(event).toMatchObject({
        object: 'event',
        environment: 'sandbox',
        product: 'mobile_money',
        api_version: API_VERSION,
      });
      expect(new Date(event.created_at).toISOString()).toBe(event.created_at);
      expect(event.data).toEqual({
        transfer_id: transfer.id,
        status: states[i]?.[0],
        rail: 'mobile_money',
        ledger_state: states[i]?.[1],
        amount: '250.00',
        fee: '0.00',
        currency: 'KES',
        direction: 'outbound',
        source: wallet,
        destination: { type: 'mobile_money', network: 'mpesa', phone: '+254700000000' },
        failure_code: null,
        metadata: { customer_ref: 'INV-7' },
      });
    });
    // Ordered by time as well as by id.
    const times = events.map((e) => Date.parse(e.created_at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    // The last event carries the transfer exactly as the API shows it now.
    const now = (await api(t, 'GET', `/v1/transfers/${transfer.id}`)).data;
    expect(events.at(-1).data).toMatchObject({ status: now.status, ledger_state: now.ledger_state });
  });

  it('a rail failure emits failed with the failure code and a voided ledger state', async () => {
    const wallet = await fundedWallet(t, '500.00');
    const transfer = await transferTo(t, wallet, mobileMoney('+254700000001'));
    await drainRails(t);
    const events = await eventsAbout(t, transfer.id);
    expect(events.map((e) => e.type)).toEqual(['transfer.created', 'transfer.processing', 'transfer.failed']);
    expect(events.at(-1).data).toMatchObject({
      status: 'failed',
      failure_code: 'recipient_not_registered',
      ledger_state: 'voided',
    });
  });

  it('a rail time-out emits processing and nothing more while the rail keeps it', async () => {
    const wallet = await fundedWallet(t, '500.00');
    const transfer = await transferTo(t, wallet, mobileMoney('+254700000003'));
    await drainRails(t);
    await drainRails(t);
    expect(await typesAbout(t, transfer.id)).toEqual(['transfer.created', 'transfer.processing']);
  });

  it('cancel emits canceled; a refused cancel emits nothing', async () => {
    const wallet = await fundedWallet(t, '500.00');
    const transfer = await transferTo(t, wallet, mobileMoney('+254711111111'));
    const canceled = await api(t, 'POST', `/v1/transfers/${transfer.id}/cancel`);
    expect(canceled.statusCode).toBe(200);
    const again = await api(t, 'POST', `/v1/transfers/${transfer.id}/cancel`);
    expect(again.statusCode).toBe(409);
    const events = await eventsAbout(t, transfer.id);
    expect(events.map((e) => e.type)).toEqual(['transfer.created', 'transfer.canceled']);
    expect(events[1].data).toMatchObject({ status: 'canceled', ledger_state: 'voided' });
  });

  it('an internal transfer and a collection emit created and settled in one commit', async () => {
    const from = await fundedWallet(t, '100.00');
    const to = await fundedWallet(t, '0');
    const internal = await transferTo(t, from, to, '40.00');
    const events = await eventsAbout(t, internal.id);
    expect(events.map((e) => e.type)).toEqual(['transfer.created', 'transfer.settled']);
    // Both describe the transfer as it was written: it is created already settled.
    for (const event of events) {
      expect(event.data).toMatchObject({ status: 'settled', ledger_state: 'posted', rail: 'internal' });
    }
    expect(events[0].created_at).toBe(events[1].created_at);

    const collection = await api(t, 'POST', `/v1/sandbox/wallets/${to}/fund`, { body: { amount: '5.00' } });
    const collected = await eventsAbout(t, collection.data.id);
    expect(collected.map((e) => e.type)).toEqual(['transfer.created', 'transfer.settled']);
    expect(collected[1].data).toMatchObject({
      direction: 'inbound',
      source: null,
      destination: { type: 'wallet', wallet: to },
      amount: '5.00',
    });
  });

  it('sandbox settle, return and fail each emit their event', async () => {
    const wallet = await fundedWallet(t, '1000.00');
    const returned = await transferTo(t, wallet, mobileMoney('+254700000003'));
    await api(t, 'POST', `/v1/sandbox/transfers/${returned.id}/settle`);
    await api(t, 'POST', `/v1/sandbox/transfers/${returned.id}/return`);
    expect(await typesAbout(t, returned.id)).toEqual([
      'transfer.created',
      'transfer.settled',
      'transfer.returned',
    ]);

    const failed = await transferTo(t, wallet, mobileMoney('+254700000003'));
    await api(t, 'POST', `/v1/sandbox/transfers/${failed.id}/fail`, {
      body: { failure_code: 'rail_rejected' },
    });
    const refused = await api(t, 'POST', `/v1/sandbox/transfers/${failed.id}/settle`);
    expect(refused.statusCode).toBe(409);
    const events = await eventsAbout(t, failed.id);
    expect(events.map((e) => e.type)).toEqual(['transfer.created', 'transfer.failed']);
    expect(events[1].data).toMatchObject({ failure_code: 'rail_rejected', ledger_state: 'voided' });
  });

  it('a refused transfer writes no event; an idempotent replay writes no second one', async () => {
    const wallet = await fundedWallet(t, '9.99');
    const count = async () => {
      const page = await api(t, 'GET', `/v1/events?limit=${EVENTS_PAGE_MAX}`);
      return page.data.data.length as number;
    };
    const before = await count();
    const poor = await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney('+254711111111'), amount: '10.00', currency: 'KES' },
    });
    expect(poor.statusCode).toBe(422);
    expect(await count()).toBe(before);

    const headers = { 'idempotency-key': `events-${backend}` };
    const body = {
      source: wallet,
      destination: mobileMoney('+254711111111'),
      amount: '1.00',
      currency: 'KES',
    };
    const first = await api(t, 'POST', '/v1/transfers', { body, headers });
    const replay = await api(t, 'POST', '/v1/transfers', { body, headers });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await typesAbout(t, first.data.id)).toEqual(['transfer.created']);
  });

  it('retrieves one event as the list shows it; unknown and malformed ids are 404 and 400', async () => {
    const wallet = await fundedWallet(t, '20.00');
    const [listed] = (await api(t, 'GET', `/v1/events?limit=1`)).data.data;
    const fetched = await api(t, 'GET', `/v1/events/${listed.id}`);
    expect(fetched.statusCode).toBe(200);
    expect(fetched.data).toEqual(listed);
    // The newest: the funding's collection event, written after its inbound transfer's.
    expect(listed).toMatchObject({ type: 'collection.succeeded', data: { wallet, status: 'succeeded' } });

    const missing = await api(t, 'GET', `/v1/events/${UNKNOWN_EVENT_ID}`);
    expect(missing.statusCode).toBe(404);
    expect(missing.data.code).toBe('resource_missing');
    const malformed = await api(t, 'GET', '/v1/events/tr_01m80v1f31hmw57sgkdkcnyxra');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.data.param).toBe('id');
  });

  it("another organization's events are invisible: 404 by id, absent from lists", async () => {
    const wallet = await fundedWallet(t, '50.00');
    const transfer = await transferTo(t, wallet, mobileMoney('+254711111111'), '5.00');
    const [ours] = await eventsAbout(t, transfer.id);

    const other = await newOrganizationKey(t);
    expect((await api(t, 'GET', `/v1/events/${ours.id}`, { key: other })).statusCode).toBe(404);
    expect(await eventsAbout(t, transfer.id, other)).toEqual([]);
    const theirs = await fundedWallet(t, '7.00', 'KES', other);
    const all = (await api(t, 'GET', `/v1/events?limit=${EVENTS_PAGE_MAX}`, { key: other })).data.data;
    // Funding is a collection: its event, and its inbound transfer's two, all about their wallet only.
    expect(all.map((e: any) => e.type)).toEqual([
      'collection.succeeded',
      'transfer.settled',
      'transfer.created',
    ]);
    expect(all.every((e: any) => (e.data.destination?.wallet ?? e.data.wallet) === theirs)).toBe(true);
  });

  it('filters by type and creation time, and refuses unknown types and malformed filters', async () => {
    const wallet = await fundedWallet(t, '300.00');
    const transfer = await transferTo(t, wallet, mobileMoney('+254711111111'));
    await api(t, 'POST', `/v1/transfers/${transfer.id}/cancel`);

    const canceled = await api(t, 'GET', `/v1/events?type=transfer.canceled&limit=${EVENTS_PAGE_MAX}`);
    expect(canceled.statusCode).toBe(200);
    expect(canceled.data.data.length).toBeGreaterThan(0);
    expect(canceled.data.data.every((e: any) => e.type === 'transfer.canceled')).toBe(true);
    expect(canceled.data.data.map((e: any) => e.data.transfer_id)).toContain(transfer.id);

    const both = await api(t, 'GET', `/v1/events?type=transfer.created&resource=${transfer.id}`);
    expect(both.data.data.map((e: any) => e.type)).toEqual(['transfer.created']);
    // A known type that nothing emits yet is an empty page, not an error.
    const none = await api(t, 'GET', '/v1/events?type=ledger.matched');
    expect(none.data).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });

    const [newest] = (await api(t, 'GET', '/v1/events?limit=1')).data.data;
    const from = encodeURIComponent(newest.created_at);
    const since = await api(t, 'GET', `/v1/events?created[gte]=${from}&limit=${EVENTS_PAGE_MAX}`);
    expect(since.data.data.map((e: any) => e.id)).toContain(newest.id);
    expect(since.data.data.every((e: any) => e.created_at >= newest.created_at)).toBe(true);
    const future = encodeURIComponent(new Date(Date.now() + 60_000).toISOString());
    expect((await api(t, 'GET', `/v1/events?created[gte]=${future}`)).data.data).toEqual([]);

    for (const [query, param] of [
      ['type=transfer.exploded', 'type'],
      ['type=TRANSFER.CREATED', 'type'],
      ['resource=wallet_01m80v1f31hmw57sgkdkcnyxra', 'resource'],
      ['starting_after=tr_01m80v1f31hmw57sgkdkcnyxra', 'starting_after'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['created[gte]=yesterday', 'created[gte]'],
      ['colour=red', 'colour'],
    ]) {
      const response = await api(t, 'GET', `/v1/events?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.data, query).toMatchObject({ code: 'validation_error', param });
    }
  });

  it('pages newest first with next_cursor, without gaps or repeats', async () => {
    const wallet = await fundedWallet(t, '1000.00');
    const transfer = await transferTo(t, wallet, mobileMoney('+254700000000'));
    await drainRails(t);
    const expected = (await eventsAbout(t, transfer.id)).map((e) => e.id).reverse();
    expect(expected).toHaveLength(3);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const after: string = cursor === null ? '' : `&starting_after=${cursor}`;
      const page = await api(t, 'GET', `/v1/events?resource=${transfer.id}&limit=2${after}`);
      expect(page.data.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.data.map((e: any) => e.id));
      expect(page.data.next_cursor).toBe(page.data.has_more ? page.data.data.at(-1).id : null);
      cursor = page.data.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual(expected);
    expect([...seen].sort().reverse()).toEqual(seen);
  });
});
