/**
 * A rail partner's own account balances through the service: an admin asks over the API
 * (`POST /v1/rail-partners/{id}/balance-queries`); M-Pesa answers by callback, so the query is `requested`
 * until Daraja's Account Balance result comes back over real HTTP to the service's callback address and
 * reports the accounts, once (a repeat is a `duplicate`, a result nobody asked for changes nothing); MTN
 * MoMo answers at once. Each result is a `rail_partner_balance.updated` event. A disabled partner, a key
 * without the `admin` scope and an unreachable partner are refused with nothing recorded.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { momoSimulatorPartner } from '../src/partnerSimulators.ts';
import {
  DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS,
  type DarajaSimulator,
  startDarajaSimulator,
} from '../src/simulators/mpesaDaraja/index.ts';
import { type MomoSimulator, startMomoSimulator } from '../src/simulators/mtnMomo/index.ts';
import { configureSimulatedDaraja } from './support/daraja.ts';
import { eventually } from './support/eventually.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { newOrganization } from './support/organizations.ts';

interface StoredCallback {
  path: string;
  status: string;
  detail: string | null;
  body: string;
}

const FLOAT = `${DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS.toLocaleString('en').replaceAll(',', '')}.00`;

describe.each(BACKENDS)('rail partner balances on %s', (backend) => {
  let t: TestApp;
  let sim: DarajaSimulator;
  let momo: MomoSimulator;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    [sim, momo] = await Promise.all([startDarajaSimulator(), startMomoSimulator()]);
  });
  afterAll(async () => {
    await Promise.all([sim?.close(), momo?.close()]);
    await t?.close();
  });

  const ask = (key: string, partner: string, idempotencyKey: string) =>
    api(t, 'POST', `/v1/rail-partners/${partner}/balance-queries`, {
      key,
      headers: { 'idempotency-key': idempotencyKey },
    });

  it('asks M-Pesa, and its result reports the accounts once; a repeat and an unasked result change nothing', async () => {
    const org = await newOrganization(t);
    const { id: partner, callbackUrl, rail } = await configureSimulatedDaraja(t, org.key, sim);

    const asked = await ask(org.key, partner, 'balances-1');
    expect(asked.statusCode, asked.body).toBe(201);
    expect(asked.data).toMatchObject({
      object: 'rail_partner_balance_query',
      rail_partner: partner,
      partner: 'mpesa_daraja',
      status: 'requested',
      accounts: null,
      reported_at: null,
    });
    // The same Idempotency-Key replays the answer and asks Daraja nothing more.
    const queriesSent = () => sim.requests.filter((r) => r.path === '/mpesa/accountbalance/v1/query').length;
    const sent = queriesSent();
    expect((await ask(org.key, partner, 'balances-1')).data.id).toBe(asked.data.id);
    expect(queriesSent()).toBe(sent);

    const reported = await eventually(
      async () =>
        (await api(t, 'GET', `/v1/rail-partner-balance-queries/${asked.data.id}`, { key: org.key })).data,
      (q) => q.status !== 'requested',
    );
    expect(reported).toMatchObject({ status: 'reported', failure_code: null });
    expect(reported.reported_at).not.toBeNull();
    expect(reported.accounts).toContainEqual({
      account: 'Utility Account',
      currency: 'KES',
      available: FLOAT,
      current: FLOAT,
    });

    const stored = async () =>
      (await api(t, 'GET', '/v1/rail-callbacks?limit=100', { key: org.key })).data.data as StoredCallback[];
    const [result] = await stored();
    expect(result).toMatchObject({ path: 'balance/result', status: 'applied' });
    // The same bytes again: a duplicate. A result nobody asked for (the adapter asked behind the API's back):
    // recorded, changing no query.
    const again = await fetch(`${callbackUrl}/balance/result`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: result?.body,
    });
    expect(again.status).toBe(200);
    await rail.queryAccountBalance();
    // Each is stored as it arrives (`received`) and applied after: wait until all three are decided.
    const list = await eventually(
      stored,
      (callbacks) => callbacks.length === 3 && callbacks.every((c) => c.status !== 'received'),
    );
    expect(list.map((c) => [c.status, c.detail])).toContainEqual([
      'ignored',
      'no balance query has this reference',
    ]);
    expect(list.map((c) => c.status).sort()).toEqual(['applied', 'duplicate', 'ignored']);

    const events = await api(t, 'GET', `/v1/events?type=rail_partner_balance.updated&limit=10`, {
      key: org.key,
    });
    expect(events.data.data.map((e: { data: { id: string; status: string } }) => e.data)).toEqual([
      expect.objectContaining({ id: asked.data.id, status: 'reported' }),
    ]);
    const listed = await api(t, 'GET', `/v1/rail-partners/${partner}/balance-queries`, { key: org.key });
    expect(listed.data.data.map((q: { id: string }) => q.id)).toEqual([asked.data.id]);
  });

  it('asks MTN MoMo, which answers at once with its disbursement and collection accounts', async () => {
    const org = await newOrganization(t);
    const created = await api(t, 'POST', '/v1/rail-partners', {
      key: org.key,
      body: momoSimulatorPartner(momo),
    });
    expect(created.statusCode, created.body).toBe(201);
    const asked = await ask(org.key, created.data.id, 'momo-balances');
    expect(asked.statusCode, asked.body).toBe(201);
    expect(asked.data).toMatchObject({ partner: 'mtn_momo', status: 'reported' });
    expect(asked.data.accounts.map((a: { account: string }) => a.account)).toEqual([
      'disbursement',
      'collection',
    ]);
    for (const account of asked.data.accounts) {
      expect(account).toMatchObject({ currency: 'UGX', current: null });
      expect(account.available).toMatch(/^-?\d+(\.\d+)?$/);
    }
  });

  it('refuses a key without the admin scope, a disabled partner and an unreachable one, recording nothing', async () => {
    const org = await newOrganization(t);
    const { id: partner } = await configureSimulatedDaraja(t, org.key, sim);
    const viewer = await org.member(['viewer']);
    const refused = await ask(viewer.key, partner, 'viewer');
    expect(refused.statusCode).toBe(403);

    sim.failNext(1, 503);
    const unreachable = await ask(org.key, partner, 'down');
    expect(unreachable.statusCode).toBe(503);
    expect(unreachable.data).toMatchObject({ code: 'rail_unavailable' });

    const disabled = await api(t, 'PATCH', `/v1/rail-partners/${partner}`, {
      key: org.key,
      headers: { 'idempotency-key': 'disable' },
      body: { status: 'disabled' },
    });
    expect(disabled.statusCode, disabled.body).toBe(200);
    const closed = await ask(org.key, partner, 'disabled');
    expect(closed.statusCode).toBe(409);
    expect(closed.data).toMatchObject({ code: 'balances_not_available', param: 'id' });
    const listed = await api(t, 'GET', `/v1/rail-partners/${partner}/balance-queries`, { key: org.key });
    expect(listed.data.data).toEqual([]);
  });
});
