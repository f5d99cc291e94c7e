/**
 * Payment batches through HTTP: every item checked first (a faulty one refuses the batch, naming its row
 * and field); the total held while the batch waits and runs; authorized as a whole (one approval covers its
 * items); items run as ordinary transfers in chunks; a batch is paid once (reference, Idempotency-Key, item
 * keys), resumes after a worker dies, and can be canceled; the ledger stays exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAYMENT_BATCH_LEASE_MS } from '../src/modules/paymentBatches/domain.ts';
import { leaseRunnableBatch } from '../src/modules/paymentBatches/repository.ts';
import { runPaymentBatchWorkerOnce } from '../src/modules/paymentBatches/useCases/worker.ts';
import { runPaymentBatchPass } from '../src/modules/paymentBatches/workers.ts';
import { LedgerWriter } from '../src/modules/transfers/useCases/posting/writer.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, drainRails, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';
import { newOrganization } from './support/organizations.ts';

describe.each(BACKENDS)('payment batches on %s', (backend) => {
  let t: TestApp;
  let writer: LedgerWriter;
  const realNow = () => new Date();

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    writer = new LedgerWriter(t.deps, 1);
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await t.close();
  });

  const submit = (body: unknown, key = t.key, headers: Record<string, string> = {}) =>
    api(t, 'POST', '/v1/payment-batches', { key, body, headers });
  const run = async () => {
    while ((await runPaymentBatchPass(t.deps, writer)) > 0) {}
  };
  const batchOf = async (id: string, key = t.key) =>
    (await api(t, 'GET', `/v1/payment-batches/${id}`, { key })).data;
  const reference = () => `batch-${Math.random().toString(36).slice(2, 10)}`;

  it('refuses a batch with faulty items, naming each one’s row and field, and writes nothing', async () => {
    const wallet = await fundedWallet(t, '1000.00');
    const refused = await submit({
      source: wallet,
      currency: 'KES',
      reference: reference(),
      items: [
        { reference: 'a', destination: mobileMoney('+254711000001'), amount: '10.00' },
        { reference: 'b', destination: mobileMoney('not-a-phone'), amount: '10.00' },
        { reference: 'c', destination: mobileMoney('+254711000003'), amount: '10.001' },
        { reference: 'a', destination: mobileMoney('+254711000004'), amount: '10.00' },
        { reference: 'e', destination: 'wallet_01kb0p9a1b2c3d4e5f6g7h8j9k', amount: '10.00' },
      ],
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.data.code).toBe('payment_batch_invalid');
    expect(
      refused.data.errors.map((e: { row: number; param: string; code: string }) => [e.row, e.param, e.code]),
    ).toEqual([
      [2, 'items.1.destination.phone', 'invalid_format'],
      [3, 'items.2.amount', 'too_precise'],
      [4, 'items.3.reference', 'duplicate'],
      [5, 'items.4.destination', 'resource_missing'],
    ]);
    expect((await api(t, 'GET', '/v1/payment-batches')).data.data).toEqual([]);
    expect((await balanceOf(t, wallet)).available).toBe('1000.00');
  });

  it('holds the total, runs every item as an ordinary transfer, and reports per item', async () => {
    const wallet = await fundedWallet(t, '1000.00');
    const payee = await fundedWallet(t, '0');
    const accepted = await submit({
      source: wallet,
      currency: 'KES',
      reference: reference(),
      items: [
        {
          reference: 'emp-1',
          destination: mobileMoney('+254711000011'),
          amount: '100.00',
          metadata: { staff: '1' },
        },
        { reference: 'emp-2', destination: payee, amount: '50.00' },
        { reference: 'emp-3', destination: { type: 'wallet', wallet: payee }, amount: '25.00' },
      ],
      metadata: { run: 'november' },
    });
    expect(accepted.statusCode, accepted.body).toBe(202);
    expect(accepted.data).toMatchObject({
      object: 'payment_batch',
      status: 'validating',
      total: '175.00',
      items: 3,
      reserved: '0.00',
    });
    await run();
    const done = await batchOf(accepted.data.id);
    expect(done).toMatchObject({
      status: 'completed',
      succeeded: 3,
      failed: 0,
      reserved: '0.00',
      authorization: { decision: 'allow', rule: 'default' },
    });
    const items = await api(t, 'GET', `/v1/payment-batches/${accepted.data.id}/items?limit=2`);
    expect(items.data).toMatchObject({ has_more: true, next_cursor: 2 });
    expect(items.data.data[0]).toMatchObject({
      row: 1,
      reference: 'emp-1',
      status: 'succeeded',
      amount: '100.00',
    });
    const transfer = await api(t, 'GET', `/v1/transfers/${items.data.data[0].transfer}`);
    expect(transfer.data).toMatchObject({
      amount: '100.00',
      source: wallet,
      status: 'pending',
      metadata: { staff: '1', payment_batch: accepted.data.id, batch_item: 'emp-1' },
    });
    expect(await balanceOf(t, wallet)).toMatchObject({ available: '825.00', pending: '100.00' });
    expect((await balanceOf(t, payee)).available).toBe('75.00');
    await drainRails(t);
    const events = await api(t, 'GET', '/v1/events?limit=100');
    const types = events.data.data
      .filter((e: { data: { payment_batch_id?: string } }) => e.data.payment_batch_id === accepted.data.id)
      .map((e: { type: string }) => e.type);
    expect(types.sort()).toEqual([
      'payment_batch.completed',
      'payment_batch.created',
      'payment_batch.processing',
    ]);
    await expectLedgerHealthy(t);
  });

  it('a batch whose total the wallet cannot cover fails whole, holding and paying nothing', async () => {
    const wallet = await fundedWallet(t, '100.00');
    const accepted = await submit({
      source: wallet,
      currency: 'KES',
      reference: reference(),
      items: [
        { reference: 'x', destination: mobileMoney('+254711000021'), amount: '60.00' },
        { reference: 'y', destination: mobileMoney('+254711000022'), amount: '60.00' },
      ],
    });
    await run();
    expect(await batchOf(accepted.data.id)).toMatchObject({
      status: 'failed',
      failure_code: 'insufficient_funds',
      failed: 2,
    });
    expect(await balanceOf(t, wallet)).toMatchObject({ available: '100.00', pending: '0.00' });
    await expectLedgerHealthy(t);
  });

  it('an item refused when it runs fails alone; what it would have paid is released', async () => {
    const operator = (await newOrganization(t)).key;
    expect(operator).toBeTruthy();
    const wallet = await fundedWallet(t, '500.00');
    const payee = await fundedWallet(t, '0');
    const accepted = await submit({
      source: wallet,
      currency: 'KES',
      reference: reference(),
      items: [
        { reference: 'ok', destination: mobileMoney('+254711000031'), amount: '40.00' },
        { reference: 'frozen', destination: payee, amount: '60.00' },
      ],
    });
    const freeze = await api(t, 'POST', `/v1/wallets/${payee}/freeze`, {
      key: await import('./support/harness.ts').then((h) => h.complianceKey(t)),
      body: { reason: 'fraud_suspected' },
    });
    expect(freeze.statusCode, freeze.body).toBe(200);
    await run();
    expect(await batchOf(accepted.data.id)).toMatchObject({
      status: 'partially_failed',
      succeeded: 1,
      failed: 1,
    });
    const failed = await api(t, 'GET', `/v1/payment-batches/${accepted.data.id}/items?status=failed`);
    expect(failed.data.data[0]).toMatchObject({
      reference: 'frozen',
      failure_code: 'wallet_not_active',
      transfer: null,
    });
    expect(await balanceOf(t, wallet)).toMatchObject({ available: '460.00', pending: '40.00' });
    await expectLedgerHealthy(t);
  });

  it('is paid once: a used reference is a 409, an Idempotency-Key replays, and two workers never pay twice', async () => {
    const wallet = await fundedWallet(t, '300.00');
    const body = {
      source: wallet,
      currency: 'KES',
      reference: reference(),
      items: Array.from({ length: 30 }, (_, i) => ({
        reference: `p${i}`,
        destination: mobileMoney(`+2547110001${String(i).padStart(2, '0')}`),
        amount: '10.00',
      })),
    };
    const first = await submit(body, t.key, { 'idempotency-key': `k-${body.reference}` });
    const replay = await submit(body, t.key, { 'idempotency-key': `k-${body.reference}` });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.data.id).toBe(first.data.id);
    const again = await submit(body);
    expect(again.statusCode).toBe(409);
    expect(again.data).toMatchObject({ code: 'duplicate_reference', param: 'reference' });
    await Promise.all([run(), run()]);
    expect(await batchOf(first.data.id)).toMatchObject({ status: 'completed', succeeded: 30 });
    const transfers = await api(t, 'GET', `/v1/transfers?wallet=${wallet}&limit=100`);
    expect(transfers.data.data.filter((x: { direction: string }) => x.direction === 'outbound')).toHaveLength(
      30,
    );
    expect(await balanceOf(t, wallet)).toMatchObject({ available: '0.00', pending: '300.00' });
    await expectLedgerHealthy(t);
  });

  it('resumes after its worker dies: the lease runs out and the next worker finishes the rest', async () => {
    const wallet = await fundedWallet(t, '5000.00');
    const accepted = await submit({
      source: wallet,
      currency: 'KES',
      reference: reference(),
      items: Array.from({ length: 450 }, (_, i) => ({
        reference: `r${i}`,
        destination: mobileMoney('+254711000200'),
        amount: '1.00',
      })),
    });
    // One worker runs one chunk, then another takes the batch and dies holding its lease.
    await runPaymentBatchWorkerOnce(t.deps, writer, 1);
    expect(await batchOf(accepted.data.id)).toMatchObject({ status: 'processing', succeeded: 200 });
    expect(await leaseRunnableBatch(t.deps.store, t.deps.now(), PAYMENT_BATCH_LEASE_MS)).toMatchObject({
      id: accepted.data.id,
    });
    expect(await runPaymentBatchWorkerOnce(t.deps, writer)).toBe(false);
    t.deps.now = () => new Date(Date.now() + PAYMENT_BATCH_LEASE_MS + 1_000);
    try {
      await run();
    } finally {
      t.deps.now = realNow;
    }
    expect(await batchOf(accepted.data.id)).toMatchObject({
      status: 'completed',
      succeeded: 450,
      reserved: '0.00',
    });
    expect(await balanceOf(t, wallet)).toMatchObject({ available: '4550.00', pending: '450.00' });
    await expectLedgerHealthy(t);
  });

  it('a policy that asks for approval holds the batch pending_approval with its total held; one approval covers every item', async () => {
    const org = await newOrganization(t);
    await api(t, 'PUT', '/v1/policies', {
      key: org.key,
      body: {
        rules: [
          {
            id: 'big_payouts',
            match: { amount: [{ currency: 'KES', gte: '100.00' }] },
            action: 'require_approval',
            approval: { quorum: 1, roles: ['approver'] },
          },
        ],
      },
    });
    const initiator = await org.member(['initiator']);
    const wallet = await fundedWallet(t, '1000.00', 'KES', org.key);
    const accepted = await submit(
      {
        source: wallet,
        currency: 'KES',
        reference: reference(),
        items: [
          { reference: 'small', destination: mobileMoney('+254711000301'), amount: '20.00' },
          { reference: 'big', destination: mobileMoney('+254711000302'), amount: '200.00' },
        ],
      },
      initiator.key,
    );
    await run();
    const waiting = await batchOf(accepted.data.id, org.key);
    expect(waiting).toMatchObject({
      status: 'pending_approval',
      reserved: '220.00',
      authorization: { decision: 'require_approval', rule: 'big_payouts' },
      created_by: initiator.id,
    });
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '780.00', pending: '220.00' });
    const self = await api(t, 'POST', `/v1/approvals/${waiting.approval}/approve`, {
      key: initiator.key,
      body: {},
    });
    expect(self.data.code).toBe('self_approval_forbidden');
    const approver = await org.member(['approver']);
    const approved = await api(t, 'POST', `/v1/approvals/${waiting.approval}/approve`, {
      key: approver.key,
      body: {},
    });
    expect(approved.data.status).toBe('approved');
    await run();
    expect(await batchOf(accepted.data.id, org.key)).toMatchObject({ status: 'completed', succeeded: 2 });
    const items = (await api(t, 'GET', `/v1/payment-batches/${accepted.data.id}/items`, { key: org.key }))
      .data.data;
    const big = (await api(t, 'GET', `/v1/transfers/${items[1].transfer}`, { key: org.key })).data;
    // Its own rule asked for approval; the batch's approval covers it.
    expect(big).toMatchObject({
      status: 'pending',
      approval: waiting.approval,
      authorization: { decision: 'require_approval', rule: 'big_payouts' },
    });
    await expectLedgerHealthy(t);
  });

  it('canceling a batch waiting for approval cancels the approval and releases the hold', async () => {
    const org = await newOrganization(t);
    await api(t, 'PUT', '/v1/policies', {
      key: org.key,
      body: {
        rules: [
          {
            id: 'all_batches',
            applies_to: 'payment_batch',
            match: { amount: [{ currency: 'KES', gte: '1.00' }] },
            action: 'require_approval',
            approval: { quorum: 1, roles: ['approver'] },
          },
        ],
      },
    });
    const wallet = await fundedWallet(t, '100.00', 'KES', org.key);
    const accepted = await submit(
      {
        source: wallet,
        currency: 'KES',
        reference: reference(),
        items: [{ reference: 'one', destination: mobileMoney('+254711000401'), amount: '30.00' }],
      },
      org.key,
    );
    await run();
    const waiting = await batchOf(accepted.data.id, org.key);
    expect(waiting).toMatchObject({ status: 'pending_approval', authorization: { rule: 'all_batches' } });
    const canceled = await api(t, 'POST', `/v1/payment-batches/${accepted.data.id}/cancel`, { key: org.key });
    expect(canceled.data).toMatchObject({ status: 'canceled', canceled: 1, reserved: '0.00' });
    expect((await api(t, 'GET', `/v1/approvals/${waiting.approval}`, { key: org.key })).data.status).toBe(
      'canceled',
    );
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '100.00', pending: '0.00' });
    const twice = await api(t, 'POST', `/v1/payment-batches/${accepted.data.id}/cancel`, { key: org.key });
    expect(twice.statusCode).toBe(409);
    await expectLedgerHealthy(t);
  });

  it('takes an uploaded CSV (RFC 4180 quoting), and refuses a faulty row naming it', async () => {
    const wallet = await fundedWallet(t, '100.00');
    const ref = reference();
    const csv = [
      'reference,amount,type,network,phone,name',
      'c1,10.00,mobile_money,mpesa,+254711000501,"Wanjiru, Amina"',
      `c2,5.00,wallet,,,`,
    ].join('\r\n');
    const payee = await fundedWallet(t, '0');
    const upload = await api(
      t,
      'POST',
      `/v1/payment-batches?source=${wallet}&currency=KES&reference=${ref}`,
      {
        body: csv.replace('c2,5.00,wallet,,,', `c2,5.00,,,,`).concat(''),
        headers: { 'content-type': 'text/csv' },
      },
    );
    // A wallet row needs its wallet column: refused, naming row 2.
    expect(upload.statusCode).toBe(422);
    expect(upload.data.errors[0]).toMatchObject({ row: 2, param: 'items.1.destination' });
    const good = `reference,amount,type,network,phone,name,wallet\r\nc1,10.00,mobile_money,mpesa,+254711000501,"Wanjiru, Amina",\r\nc2,5.00,wallet,,,,${payee}\r\n`;
    const accepted = await api(
      t,
      'POST',
      `/v1/payment-batches?source=${wallet}&currency=KES&reference=${ref}`,
      {
        body: good,
        headers: { 'content-type': 'text/csv' },
      },
    );
    expect(accepted.statusCode, accepted.body).toBe(202);
    await run();
    const items = (await api(t, 'GET', `/v1/payment-batches/${accepted.data.id}/items`)).data.data;
    expect(items[0].destination).toMatchObject({ type: 'mobile_money', name: 'Wanjiru, Amina' });
    expect(items.map((i: { status: string }) => i.status)).toEqual(['succeeded', 'succeeded']);
    // Records ended by a bare LF, as many tools write them, are read the same.
    const unix = await api(
      t,
      'POST',
      `/v1/payment-batches?source=${wallet}&currency=KES&reference=${reference()}`,
      { body: good.replaceAll('\r\n', '\n'), headers: { 'content-type': 'text/csv' } },
    );
    expect(unix.statusCode, unix.body).toBe(202);
    await run();
    const unixItems = (await api(t, 'GET', `/v1/payment-batches/${unix.data.id}/items`)).data.data;
    expect(unixItems[0].destination).toMatchObject({ type: 'mobile_money', name: 'Wanjiru, Amina' });
    expect(unixItems.map((i: { status: string }) => i.status)).toEqual(['succeeded', 'succeeded']);
    const elsewhere = await api(t, 'POST', '/v1/transfers', {
      body: good,
      headers: { 'content-type': 'text/csv' },
    });
    expect(elsewhere.statusCode).toBe(415);
  });

  it('runs a batch of 10,000 items', async () => {
    const wallet = await fundedWallet(t, '20000.00');
    const payee = await fundedWallet(t, '0');
    const accepted = await submit({
      source: wallet,
      currency: 'KES',
      reference: reference(),
      items: Array.from({ length: 10_000 }, (_, i) => ({
        reference: `n${i}`,
        destination: payee,
        amount: '1.00',
      })),
    });
    expect(accepted.statusCode, accepted.body.slice(0, 500)).toBe(202);
    await run();
    expect(await batchOf(accepted.data.id)).toMatchObject({ status: 'completed', succeeded: 10_000 });
    expect((await balanceOf(t, payee)).available).toBe('10000.00');
    expect((await balanceOf(t, wallet)).available).toBe('10000.00');
    await expectLedgerHealthy(t);
  }, 300_000);
});
