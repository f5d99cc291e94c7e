/**
 * Reversal of a settled M-Pesa payout through the service: an operator asks for it over the API, the
 * reversal worker sends Daraja's Reversal request to the simulator (a real HTTP server), and the result
 * comes back over real HTTP to the service's callback address. The simulator holds its callbacks until the
 * test delivers them, so results can be made duplicated, late, out of order or missing (then found by a
 * Transaction Status query). One ledger return, the wallet restored once, the ledger verified.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mpesaDarajaRail } from '../src/modules/railPartners/partners/mpesaDaraja/rail.ts';
import { DARAJA_REVERSAL_FIRST_CHECK_AFTER_MS } from '../src/modules/railPartners/partners/mpesaDaraja/reversal.ts';
import { railPartnerDirectory } from '../src/modules/railPartners/useCases/directory.ts';
import { runRailReversalWorkerOnce } from '../src/modules/railPartners/workers.ts';
import { runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import { guardedFetch } from '../src/outbound/guard.ts';
import { darajaSimulatorPartner, momoSimulatorPartner } from '../src/partnerSimulators.ts';
import { MalformedCallbackError } from '../src/rails/partner.ts';
import {
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  type DarajaSimulator,
  startDarajaSimulator,
} from '../src/simulators/mpesaDaraja/index.ts';
import { startMomoSimulator } from '../src/simulators/mtnMomo/index.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

/** Callbacks wait this long in the simulator: the test delivers them when it wants them. */
const HELD_CALLBACK_MS = 10 * 60_000;
const CREDENTIALS = DARAJA_SIMULATOR_DEFAULT_CREDENTIALS;
const SETTLING_PHONE = '+254700000000';
const UNDECIDED_PHONE = '+254700000003';

interface StoredCallback {
  id: string;
  path: string;
  status: string;
  body: string;
}

describe.each(BACKENDS)('M-Pesa reversals on %s', (backend) => {
  let t: TestApp;
  let sim: DarajaSimulator;
  const realNow = () => new Date();

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    sim = await startDarajaSimulator({ callbackDelayMs: HELD_CALLBACK_MS });
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await sim?.close();
    await t?.close();
  });

  /** A new organization with Daraja configured over the API and a funded KES wallet. */
  async function configured(): Promise<{ org: TestOrganization; wallet: string; callbackUrl: string }> {
    const org = await newOrganization(t);
    const created = await api(t, 'POST', '/v1/rail-partners', {
      key: org.key,
      body: darajaSimulatorPartner(sim.url),
    });
    expect(created.statusCode, created.body).toBe(201);
    const wallet = await fundedWallet(t, '1000.00', 'KES', org.key);
    return { org, wallet, callbackUrl: created.data.callback_url as string };
  }

  const railWork = () =>
    runRailWorkerOnce(t.deps, (transfer) => railPartnerDirectory(t.deps).forTransfer(transfer));
  const reversalWork = () => runRailReversalWorkerOnce(t.deps, railPartnerDirectory(t.deps));
  /** Delivers the held callbacks whose URL ends with `path` (all when none is named); each is applied on arrival. */
  const deliver = (path?: string) =>
    sim.deliverPendingCallbacks(path ? (url) => url.endsWith(`/${path}`) : undefined);

  /** A payout to `phone`, submitted by the rail worker; settled by its B2C result when `settle`. */
  async function payout(
    org: TestOrganization,
    wallet: string,
    phone: string,
    settle = true,
  ): Promise<string> {
    const created = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: { source: wallet, destination: mobileMoney(phone), amount: '100.00', currency: 'KES' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.data.id as string;
    await railWork();
    if (settle) {
      await deliver('b2c/result');
      expect((await transferOf(org, id)).status).toBe('settled');
    }
    return id;
  }

  const transferOf = async (org: TestOrganization, id: string) =>
    (await api(t, 'GET', `/v1/transfers/${id}`, { key: org.key })).data;
  const reverse = (key: string, id: string, idempotencyKey: string, reason = 'Paid the wrong customer') =>
    api(t, 'POST', `/v1/transfers/${id}/reverse`, {
      key,
      headers: { 'idempotency-key': idempotencyKey },
      body: { reason },
    });
  const callbacksOf = async (org: TestOrganization, transfer: string) =>
    (await api(t, 'GET', `/v1/rail-callbacks?transfer=${transfer}&limit=100`, { key: org.key })).data
      .data as StoredCallback[];
  const returnEntries = async (org: TestOrganization, transfer: string) =>
    (
      (await api(t, 'GET', `/v1/ledger/entries?transfer=${transfer}&limit=100`, { key: org.key })).data
        .data as { kind: string }[]
    ).filter((e) => e.kind === 'reversal');
  const eventsOf = async (org: TestOrganization, transfer: string, type: string) =>
    (await api(t, 'GET', `/v1/events?resource=${transfer}&type=${type}&limit=100`, { key: org.key })).data
      .data as { data: Record<string, unknown> }[];

  it('reverses a settled payout once: one ledger return, the wallet restored once, despite a missing, late and repeated result', async () => {
    const { org, wallet, callbackUrl } = await configured();
    const id = await payout(org, wallet, SETTLING_PHONE);
    const afterPayout = (await balanceOf(t, wallet, org.key)).available as string;

    const asked = await reverse(org.key, id, `rev-${id}`);
    expect(asked.statusCode, asked.body).toBe(200);
    expect(asked.data).toMatchObject({
      object: 'transfer_reversal',
      transfer: id,
      status: 'requested',
      reason: 'Paid the wrong customer',
      amount: '100.00',
      partner: 'mpesa_daraja',
    });
    // The same request again (same key) is the same answer; another key answers the first reversal.
    const replayed = await reverse(org.key, id, `rev-${id}`);
    expect(replayed.data.id).toBe(asked.data.id);
    const second = await reverse(org.key, id, `rev-again-${id}`, 'Asked twice');
    expect(second.statusCode).toBe(200);
    expect(second.data).toMatchObject({ id: asked.data.id, reason: 'Paid the wrong customer' });

    await reversalWork();
    const sent = await api(t, 'GET', `/v1/transfers/${id}/reversal`, { key: org.key });
    expect(sent.data).toMatchObject({ status: 'sent' });
    expect(sent.data.partner_reference).toEqual(expect.any(String));
    const request = sim.requests.find((r) => r.path === '/mpesa/reversal/v1/request');
    expect(request?.body).toMatchObject({
      CommandID: 'TransactionReversal',
      TransactionID: asked.data.original_transaction_id,
      Amount: 100,
      ReceiverParty: CREDENTIALS.shortCode,
      RecieverIdentifierType: '11',
    });
    expect((await transferOf(org, id)).status).toBe('settled');

    // The result does not come: the worker's next look asks Transaction Status, whose answer returns it.
    t.deps.now = () => new Date(Date.now() + DARAJA_REVERSAL_FIRST_CHECK_AFTER_MS + 1_000);
    await reversalWork();
    t.deps.now = realNow;
    await deliver('reversal/status/result');
    expect((await transferOf(org, id)).status).toBe('returned');

    // The Reversal result, late and out of order, then the same bytes again: nothing more moves.
    await deliver('reversal/result');
    const stored = await callbacksOf(org, id);
    const result = stored.find((c) => c.path === 'reversal/result');
    expect(result?.status).toBe('unchanged');
    const again = await fetch(`${callbackUrl}/reversal/result`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: result?.body,
    });
    expect(again.status).toBe(200);
    // A duplicate is stored without applying it, so it names no transfer: all the organization's are read.
    const all = (await api(t, 'GET', '/v1/rail-callbacks?limit=100', { key: org.key })).data
      .data as StoredCallback[];
    expect(
      all
        .filter((c) => c.path === 'reversal/result')
        .map((c) => c.status)
        .sort(),
    ).toEqual(['duplicate', 'unchanged']);

    expect(await returnEntries(org, id)).toHaveLength(1);
    expect(await eventsOf(org, id, 'transfer.returned')).toHaveLength(1);
    const restored = (await balanceOf(t, wallet, org.key)).available as string;
    expect(Number(restored) - Number(afterPayout)).toBe(100);
    const final = await api(t, 'GET', `/v1/transfers/${id}/reversal`, { key: org.key });
    expect(final.data).toMatchObject({ status: 'succeeded', failure_code: null });
    expect(final.data.partner_transaction_id).toEqual(expect.any(String));
    // The simulator's books moved the money back too: the shortcode's float has it again.
    const reversal = sim.payments.find((p) => p.originatorConversationId === final.data.partner_reference);
    expect(reversal).toMatchObject({ amount: 100, creditsUtilityOf: CREDENTIALS.shortCode });
    await expectLedgerHealthy(t);
  });

  it('a refused reversal leaves the payout settled and records why', async () => {
    const { org, wallet } = await configured();
    const id = await payout(org, wallet, SETTLING_PHONE);
    const receipt = sim.payments.find((p) => p.originatorConversationId === id)?.receipt ?? '';
    // Someone reverses it at M-Pesa first (its result goes elsewhere): ours is then "already reversed".
    const elsewhere = mpesaDarajaRail(
      { fetch: guardedFetch('allow_loopback'), baseUrl: sim.url, ...CREDENTIALS },
      { baseUrl: 'http://127.0.0.1:9/elsewhere' },
    );
    const transfer = (await transferOf(org, id)) as { amount: string };
    expect(transfer.amount).toBe('100.00');
    const first = await elsewhere.reverse?.(
      {
        idempotencyReference: 'elsewhere',
        partnerTransactionId: receipt,
        remarks: 'Elsewhere',
        transfer: { id, amountMinor: 10_000n, currency: 'KES' } as never,
      },
      new Date(),
    );
    expect(first).toMatchObject({ accepted: true });

    expect((await reverse(org.key, id, `rev-${id}`)).statusCode).toBe(200);
    await reversalWork();
    await deliver('reversal/result');
    const refused = await api(t, 'GET', `/v1/transfers/${id}/reversal`, { key: org.key });
    expect(refused.data).toMatchObject({ status: 'refused', failure_code: 'already_reversed' });
    expect((await transferOf(org, id)).status).toBe('settled');
    expect(await returnEntries(org, id)).toHaveLength(0);
    const updates = await eventsOf(org, id, 'rail_reversal.updated');
    expect(updates.map((e) => e.data.status).sort()).toEqual(['refused', 'requested', 'sent']);
    await expectLedgerHealthy(t);
  });

  it('refuses a transfer that is not a settled M-Pesa payout, with a problem code and param', async () => {
    const { org, wallet } = await configured();
    const undecided = await payout(org, wallet, UNDECIDED_PHONE, false);
    const notSettled = await reverse(org.key, undecided, `rev-${undecided}`);
    expect(notSettled.statusCode).toBe(409);
    expect(notSettled.data).toMatchObject({ code: 'invalid_state_transition', param: 'id' });

    const other = await fundedWallet(t, '0', 'KES', org.key);
    const internal = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: {
        source: wallet,
        destination: { type: 'wallet', wallet: other },
        amount: '5.00',
        currency: 'KES',
      },
    });
    expect(internal.statusCode, internal.body).toBe(201);
    expect(internal.data.status).toBe('settled');
    const notPayout = await reverse(org.key, internal.data.id, `rev-${internal.data.id}`);
    expect(notPayout.statusCode).toBe(422);
    expect(notPayout.data).toMatchObject({ code: 'reversal_not_supported', param: 'id' });

    const missingReason = await api(t, 'POST', `/v1/transfers/${undecided}/reverse`, {
      key: org.key,
      headers: { 'idempotency-key': `no-reason-${undecided}` },
      body: {},
    });
    expect(missingReason.statusCode).toBe(400);
    expect(missingReason.data.param).toBe('reason');
    const blankReason = await reverse(org.key, undecided, `blank-${undecided}`, '   ');
    expect(blankReason.statusCode).toBe(400);
    expect(blankReason.data).toMatchObject({ code: 'validation_error', param: 'reason' });
  });

  it('answers a partner that cannot reverse (MTN MoMo) with reversal_not_supported', async () => {
    const momo = await startMomoSimulator();
    try {
      const org = await newOrganization(t);
      const created = await api(t, 'POST', '/v1/rail-partners', {
        key: org.key,
        body: momoSimulatorPartner(momo),
      });
      expect(created.statusCode, created.body).toBe(201);
      const ugx = await fundedWallet(t, '50000', 'UGX', org.key);
      const sent = await api(t, 'POST', '/v1/transfers', {
        key: org.key,
        body: {
          source: ugx,
          destination: mobileMoney('+256770000000', 'mtn'),
          amount: '1500',
          currency: 'UGX',
        },
      });
      expect(sent.statusCode, sent.body).toBe(201);
      const id = sent.data.id as string;
      const settled = await api(t, 'POST', `/v1/sandbox/transfers/${id}/settle`, {
        key: org.key,
        headers: { 'idempotency-key': `settle-${id}` },
      });
      expect(settled.data.status).toBe('settled');
      const refused = await reverse(org.key, id, `rev-${id}`);
      expect(refused.statusCode).toBe(422);
      expect(refused.data).toMatchObject({ code: 'reversal_not_supported', param: 'id' });
    } finally {
      await momo.close();
    }
  });

  it('records one reversal when two requests race, and both answer it', async () => {
    const { org, wallet } = await configured();
    const id = await payout(org, wallet, SETTLING_PHONE);
    const [first, second] = await Promise.all([
      reverse(org.key, id, `race-a-${id}`),
      reverse(org.key, id, `race-b-${id}`, 'The other operator'),
    ]);
    expect([first.statusCode, second.statusCode]).toEqual([200, 200]);
    expect(first.data.id).toBe(second.data.id);
    expect(await eventsOf(org, id, 'rail_reversal.updated')).toHaveLength(1);
  });

  it('refuses an insider without the compliance role, and records nothing', async () => {
    const { org, wallet } = await configured();
    const id = await payout(org, wallet, SETTLING_PHONE);
    const initiator = await org.member(['initiator']);
    const refused = await reverse(initiator.key, id, `rev-${id}`);
    expect(refused.statusCode).toBe(403);
    expect(refused.data.code).toBe('insufficient_permissions');
    expect((await api(t, 'GET', `/v1/transfers/${id}/reversal`, { key: org.key })).statusCode).toBe(404);

    const officer = await org.member(['compliance']);
    const asked = await reverse(officer.key, id, `rev-officer-${id}`);
    expect(asked.statusCode, asked.body).toBe(200);
    expect(asked.data.requested_by).toBe(officer.id);
    const evidence = await api(t, 'GET', `/v1/transfers/${id}/evidence`, { key: org.key });
    const records = evidence.data.data as { kind: string; data: Record<string, unknown> }[];
    expect(records.find((r) => r.kind === 'transfer.reversal')?.data).toMatchObject({
      reason: 'Paid the wrong customer',
    });
  });

  it('waits for a second member when the policy governs reversals, and its proposer cannot approve it', async () => {
    const { org, wallet } = await configured();
    const id = await payout(org, wallet, SETTLING_PHONE);
    const policy = await api(t, 'PUT', '/v1/policies', {
      key: org.key,
      headers: { 'idempotency-key': `policy-${id}` },
      body: {
        rules: [
          {
            id: 'second-admin-for-reversals',
            applies_to: 'change',
            match: { kinds: ['transfer_reversal'] },
            action: 'require_approval',
            approval: { quorum: 1, roles: ['admin'] },
          },
        ],
      },
    });
    expect(policy.statusCode, policy.body).toBe(200);
    const proposer = await org.member(['admin', 'compliance']);
    const approver = await org.member(['admin']);

    const proposed = await reverse(proposer.key, id, `rev-governed-${id}`);
    expect(proposed.statusCode, proposed.body).toBe(202);
    expect(proposed.data).toMatchObject({ kind: 'transfer_reversal', action: 'request', target_id: id });
    // Nothing is asked of the partner while it waits.
    expect((await api(t, 'GET', `/v1/transfers/${id}/reversal`, { key: org.key })).statusCode).toBe(404);
    const approvalId = proposed.data.approval as string;
    const own = await api(t, 'POST', `/v1/approvals/${approvalId}/approve`, { key: proposer.key, body: {} });
    expect(own.statusCode).toBe(403);
    expect(own.data.code).toBe('self_approval_forbidden');
    // A key acting for no member does not vote either.
    expect(
      (await api(t, 'POST', `/v1/approvals/${approvalId}/approve`, { key: org.key, body: {} })).statusCode,
    ).toBe(403);

    const approved = await api(t, 'POST', `/v1/approvals/${approvalId}/approve`, {
      key: approver.key,
      body: {},
    });
    expect(approved.statusCode, approved.body).toBe(200);
    const reversal = await api(t, 'GET', `/v1/transfers/${id}/reversal`, { key: org.key });
    expect(reversal.data).toMatchObject({ status: 'requested', requested_by: proposer.id });
    await reversalWork();
    await deliver('reversal/result');
    expect((await transferOf(org, id)).status).toBe('returned');
    expect(await returnEntries(org, id)).toHaveLength(1);
    await expectLedgerHealthy(t);
  });
});

describe('reading reversal callbacks (parseCallback)', () => {
  const rail = mpesaDarajaRail(
    { fetch: guardedFetch('allow_loopback'), baseUrl: 'http://127.0.0.1:9', ...CREDENTIALS },
    { baseUrl: 'http://127.0.0.1:9/callbacks/token' },
  );
  const parse = (path: string, body: unknown) =>
    rail.parseCallback({ path, headers: {}, rawBody: JSON.stringify(body) });
  const envelope = {
    ResultType: 0,
    OriginatorConversationID: '1234-5678-1',
    ConversationID: 'AG_20261206_00aa',
  };

  it('reads a success with both receipts and the amount in minor units', () => {
    const report = parse('reversal/result', {
      Result: {
        ...envelope,
        ResultCode: 0,
        TransactionID: 'SKE52PAWR9',
        ResultParameters: {
          ResultParameter: [
            { Key: 'Amount', Value: 1.0 },
            { Key: 'OriginalTransactionID', Value: 'SKC82PACB8' },
          ],
        },
      },
    });
    expect(report).toMatchObject({
      kind: 'reversal',
      reference: '1234-5678-1',
      outcome: { kind: 'settled' },
      partnerTransactionId: 'SKE52PAWR9',
      originalTransactionId: 'SKC82PACB8',
      amountMinor: 100n,
    });
  });

  it('reads the published refusals, and a success without its receipts is malformed', () => {
    for (const [code, failureCode] of [
      ['R000001', 'already_reversed'],
      ['R000002', 'original_transaction_invalid'],
      [2001, 'partner_configuration_error'],
    ] as const) {
      const report = parse('reversal/result', {
        Result: { ...envelope, ResultCode: code, TransactionID: 'SKE0000000' },
      });
      expect(report).toMatchObject({ kind: 'reversal', outcome: { kind: 'failed', failureCode } });
    }
    expect(() =>
      parse('reversal/result', {
        Result: { ...envelope, ResultCode: 0, ResultParameters: { ResultParameter: [] } },
      }),
    ).toThrow(MalformedCallbackError);
  });

  it('reads a Transaction Status result about a reversal; queue notices and not-found decide nothing', () => {
    const status = (transactionStatus: string, resultCode = 0) =>
      parse('reversal/status/result', {
        Result: {
          ...envelope,
          ResultCode: resultCode,
          ResultParameters: {
            ResultParameter: [
              { Key: 'OriginatorConversationID', Value: '9999-1-1' },
              { Key: 'TransactionStatus', Value: transactionStatus },
              { Key: 'Amount', Value: 100 },
              { Key: 'ReceiptNo', Value: 'SKE52PAWR9' },
            ],
          },
        },
      });
    expect(status('Completed')).toMatchObject({
      kind: 'reversal',
      reference: '9999-1-1',
      outcome: { kind: 'settled' },
      amountMinor: 10_000n,
    });
    expect(status('Failed')).toMatchObject({ kind: 'reversal', outcome: { kind: 'failed' } });
    expect(status('Pending')).toEqual({ kind: 'ignored', reason: 'reversal_status_pending' });
    expect(parse('reversal/status/result', { Result: { ...envelope, ResultCode: 2033 } })).toEqual({
      kind: 'ignored',
      reason: 'reversal_status_query_result_2033',
    });
    expect(parse('reversal/timeout', { Result: envelope })).toEqual({
      kind: 'ignored',
      reason: 'reversal_queue_timeout',
    });
  });
});
