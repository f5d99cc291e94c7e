/**
 * The one posting module: one overdraft rule and one idempotency behaviour for every movement, the
 * database enforcing the ledger's rules whoever writes, single amounts capped and sums that cannot
 * overflow into a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdPostings, ZERO_SUMS } from '../src/modules/ledger/domain/ledger.ts';
import {
  ACCOUNT_SUM_MINOR_MAX,
  decideEntry,
  type PostingAccount,
} from '../src/modules/ledger/domain/posting.ts';
import { api, BACKENDS, createCustomer, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';

const count = async (t: TestApp, table: string) =>
  Number((await t.db.store.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`))[0]?.n);

describe('the posting rule', () => {
  it("never posts one organization's entry to another organization's account, whatever a request named", () => {
    const account = (id: string, organizationId: string): PostingAccount => ({
      id,
      organizationId,
      kind: 'wallet',
      currency: 'KES',
      walletStatus: 'active',
      overdraftLimitMinor: 0n,
      ...ZERO_SUMS,
      creditsPosted: 10_000n,
    });
    const accounts = new Map([
      ['wallet_ours', account('wallet_ours', 'org_ours')],
      ['wallet_theirs', account('wallet_theirs', 'org_theirs')],
      ['wallet_ours_too', account('wallet_ours_too', 'org_ours')],
    ]);
    const hold = (organizationId: string, from: string, to: string) => ({
      organizationId,
      kind: 'hold' as const,
      postings: holdPostings(from, to, 100n, 'KES'),
    });
    expect(decideEntry(accounts, new Map(), hold('org_ours', 'wallet_ours', 'wallet_ours_too')).ok).toBe(
      true,
    );
    expect(() => decideEntry(accounts, new Map(), hold('org_ours', 'wallet_theirs', 'wallet_ours'))).toThrow(
      /another organization/,
    );
    expect(() => decideEntry(accounts, new Map(), hold('org_ours', 'wallet_ours', 'wallet_theirs'))).toThrow(
      /another organization/,
    );
  });
});

describe.each(BACKENDS)('posting module on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(async () => {
    await expectLedgerHealthy(t).finally(() => t.close());
  });

  describe('the database enforces the ledger', () => {
    it('releases a hold at most once, whoever writes', async () => {
      const wallet = await fundedWallet(t, '100.00');
      const created = await api(t, 'POST', '/v1/transfers', {
        body: { source: wallet, destination: mobileMoney('+254700000000'), amount: '10.00', currency: 'KES' },
      });
      const canceled = await api(t, 'POST', `/v1/transfers/${created.data.id}/cancel`);
      expect(canceled.data.status).toBe('canceled');
      const [voided] = await t.db.store.query<{ id: string; hold_entry_id: string; currency: string }>(
        "SELECT id, hold_entry_id, currency FROM journal_entries WHERE transfer_id = $1 AND kind = 'void'",
        [created.data.id],
      );
      await expect(
        t.db.store.query(
          `INSERT INTO journal_entries (id, organization_id, transfer_id, kind, hold_entry_id, currency, created_at)
           SELECT 'je_again', organization_id, transfer_id, 'post', hold_entry_id, currency, now()
             FROM journal_entries WHERE id = $1`,
          [voided?.id],
        ),
      ).rejects.toThrow(/journal_entries_hold_released_once_idx/);
    });

    it('refuses a posting in another currency than its entry or its account', async () => {
      const wallet = await fundedWallet(t, '5.00');
      const [entry] = await t.db.store.query<{ id: string }>(
        "SELECT e.id FROM journal_entries e JOIN postings p ON p.entry_id = e.id WHERE p.account_id = $1 AND e.kind = 'direct'",
        [wallet],
      );
      const insert = (currency: string, line: number) =>
        t.db.store.query(
          `INSERT INTO postings (entry_id, line, account_id, side, phase, releases_hold, amount_minor, currency)
           VALUES ($1, $2, $3, 'credit', 'posted', false, 1, $4)`,
          [entry?.id, line, wallet, currency],
        );
      await expect(insert('UGX', 90)).rejects.toThrow(
        /postings_entry_currency_fkey|postings_account_currency_fkey/,
      );
      // Right currency for the entry, wrong for the account: a KES entry posting to a UGX wallet.
      const ugxWallet = await fundedWallet(t, '0', 'UGX');
      await expect(
        t.db.store.query(
          `INSERT INTO postings (entry_id, line, account_id, side, phase, releases_hold, amount_minor, currency)
           VALUES ($1, 91, $2, 'credit', 'posted', false, 1, 'KES')`,
          [entry?.id, ugxWallet],
        ),
      ).rejects.toThrow(/postings_account_currency_fkey/);
    });
  });

  describe('one overdraft rule for every movement', () => {
    it('a return that would take the paying-back wallet below zero is refused and writes nothing', async () => {
      const source = await fundedWallet(t, '50.00');
      const destination = await fundedWallet(t, '0');
      const sent = await api(t, 'POST', '/v1/transfers', {
        body: { source, destination, amount: '50.00', currency: 'KES', rail: 'internal' },
      });
      expect(sent.data.status).toBe('settled');
      // The destination spends it meanwhile.
      const spent = await api(t, 'POST', '/v1/transfers', {
        body: {
          source: destination,
          destination: mobileMoney('+254700000000'),
          amount: '30.00',
          currency: 'KES',
        },
      });
      expect(spent.statusCode).toBe(201);
      const entries = await count(t, 'journal_entries');
      const returned = await api(t, 'POST', `/v1/sandbox/transfers/${sent.data.id}/return`);
      expect(returned.statusCode).toBe(422);
      expect(returned.data.code).toBe('insufficient_funds');
      expect(await count(t, 'journal_entries')).toBe(entries);
      expect((await api(t, 'GET', `/v1/transfers/${sent.data.id}`)).data.status).toBe('settled');
    });

    it('a frozen wallet may not pay money back nor receive, and a hold not yet handed to its rail is released', async () => {
      const source = await fundedWallet(t, '50.00');
      const destination = await fundedWallet(t, '0');
      const sent = await api(t, 'POST', '/v1/transfers', {
        body: { source, destination, amount: '20.00', currency: 'KES', rail: 'internal' },
      });
      const held = await api(t, 'POST', '/v1/transfers', {
        body: { source, destination: mobileMoney('+254700000000'), amount: '10.00', currency: 'KES' },
      });
      const heldToo = await api(t, 'POST', '/v1/transfers', {
        body: { source, destination: mobileMoney('+254700000000'), amount: '5.00', currency: 'KES' },
      });
      await t.db.store.query("UPDATE wallets SET status = 'frozen' WHERE id IN ($1, $2)", [
        source,
        destination,
      ]);
      const returned = await api(t, 'POST', `/v1/sandbox/transfers/${sent.data.id}/return`);
      expect(returned.statusCode).toBe(409);
      expect(returned.data.code).toBe('wallet_not_active');
      // A payout not yet handed to its rail passes the release gate when it would move: it fails, its hold
      // released once (docs/COMPLIANCE.md, The release gate).
      const settled = (await api(t, 'POST', `/v1/sandbox/transfers/${held.data.id}/settle`)).data;
      expect(settled).toMatchObject({ status: 'failed', failure_code: 'wallet_not_active' });
      expect((await api(t, 'POST', `/v1/transfers/${heldToo.data.id}/cancel`)).data.status).toBe('canceled');
      expect(await balanceOf(t, source)).toMatchObject({
        available: '30.00',
        pending: '0.00',
        current: '30.00',
      });
      // Nothing new arrives in a frozen wallet (a rail credit is held for review, pending, not credited), nor in
      // a closed one (which the database lets close only empty).
      const intoFrozen = await api(t, 'POST', `/v1/sandbox/wallets/${destination}/fund`, {
        body: { amount: '1.00' },
      });
      expect(intoFrozen.statusCode).toBe(201);
      expect(intoFrozen.data.status).toBe('in_review');
      expect((await balanceOf(t, destination)).current).toBe('20.00');
      const emptied = await fundedWallet(t, '0');
      await t.db.store.query("UPDATE wallets SET status = 'closed' WHERE id = $1", [emptied]);
      const intoClosed = await api(t, 'POST', `/v1/sandbox/wallets/${emptied}/fund`, {
        body: { amount: '1.00' },
      });
      expect(intoClosed.statusCode).toBe(409);
      expect(intoClosed.data.code).toBe('wallet_not_active');
    });
  });

  describe('amounts and sums the ledger can hold', () => {
    it('caps a single funding and a single transfer per currency', async () => {
      const wallet = await fundedWallet(t, '0', 'UGX');
      const events = await count(t, 'events');
      const huge = await api(t, 'POST', `/v1/sandbox/wallets/${wallet}/fund`, {
        body: { amount: '9223372036854775807' },
      });
      expect(huge.statusCode).toBe(400);
      expect(huge.data).toMatchObject({ code: 'validation_error', param: 'amount' });
      expect(huge.data.errors[0]).toMatchObject({ code: 'out_of_range' });
      expect(huge.data.detail).toContain('1000000000000');
      const atCap = await api(t, 'POST', `/v1/sandbox/wallets/${wallet}/fund`, {
        body: { amount: '1000000000000' },
      });
      expect(atCap.statusCode).toBe(201);
      const target = await fundedWallet(t, '0', 'UGX');
      const over = await api(t, 'POST', '/v1/transfers', {
        body: {
          source: wallet,
          destination: target,
          amount: '1000000000001',
          currency: 'UGX',
          rail: 'internal',
        },
      });
      expect(over.statusCode).toBe(400);
      expect(over.data.errors[0]).toMatchObject({ param: 'amount', code: 'out_of_range' });
      // Only the funding at the cap wrote events (its transfer's two and its collection's); the refusals none.
      expect(await count(t, 'events')).toBe(events + 3);
    });

    it('a movement that would overflow an account sum is a 422 limit_exceeded that writes nothing, never a 500', async () => {
      const wallet = await fundedWallet(t, '1.00', 'RWF');
      const [settlement] = await t.db.store.query<{ id: string }>(
        "SELECT id FROM ledger_accounts WHERE kind = 'rail_settlement' AND currency = 'RWF'",
      );
      // A settlement account near the end of BIGINT (lifetime volume); its wallet side is credited alike so
      // the ledger still balances as far as this test goes, and is put back after.
      const near = (ACCOUNT_SUM_MINOR_MAX - 10n).toString();
      const [before] = await t.db.store.query<{ debits_posted: string }>(
        'SELECT debits_posted FROM ledger_accounts WHERE id = $1',
        [settlement?.id],
      );
      await t.db.store.query('UPDATE ledger_accounts SET debits_posted = $2 WHERE id = $1', [
        settlement?.id,
        near,
      ]);
      const transfers = await count(t, 'transfers');
      const events = await count(t, 'events');
      for (let i = 0; i < 2; i++) {
        const funded = await api(t, 'POST', `/v1/sandbox/wallets/${wallet}/fund`, {
          body: { amount: '100' },
        });
        expect(funded.statusCode).toBe(422);
        expect(funded.data.code).toBe('limit_exceeded');
      }
      expect(await count(t, 'transfers')).toBe(transfers);
      expect(await count(t, 'events')).toBe(events);
      await t.db.store.query('UPDATE ledger_accounts SET debits_posted = $2 WHERE id = $1', [
        settlement?.id,
        before?.debits_posted,
      ]);
      const later = await api(t, 'POST', `/v1/sandbox/wallets/${wallet}/fund`, { body: { amount: '100' } });
      expect(later.statusCode).toBe(201);
    });
  });

  describe('one idempotency behaviour', () => {
    it('an invalid request inside any write is never recorded: the corrected retry with the same key succeeds', async () => {
      const wallet = await fundedWallet(t, '0');
      const headers = { 'idempotency-key': `fund-fix-${backend}` };
      const invalid = await api(t, 'POST', `/v1/sandbox/wallets/${wallet}/fund`, {
        body: { amount: '1.005' },
        headers,
      });
      expect(invalid.statusCode).toBe(400);
      const fixed = await api(t, 'POST', `/v1/sandbox/wallets/${wallet}/fund`, {
        body: { amount: '1.00' },
        headers,
      });
      expect(fixed.statusCode).toBe(201);
      expect(fixed.headers['idempotent-replayed']).toBeUndefined();

      const hookHeaders = { 'idempotency-key': `hook-fix-${backend}` };
      const unknownType = await api(t, 'POST', '/v1/webhook-subscriptions', {
        body: { url: 'https://93.184.216.34/hooks', events: ['transfer.nope'] },
        headers: hookHeaders,
      });
      expect(unknownType.statusCode).toBe(400);
      const subscribed = await api(t, 'POST', '/v1/webhook-subscriptions', {
        body: { url: 'https://93.184.216.34/hooks', events: ['transfer.settled'] },
        headers: hookHeaders,
      });
      expect(subscribed.statusCode).toBe(201);
    });

    it('a transfer from a wallet that does not exist is recorded and replayed like every other decided failure', async () => {
      const headers = { 'idempotency-key': `no-such-source-${backend}` };
      const body = {
        source: 'wallet_01m80v1f31hmw57sgkdkcnyxra',
        destination: mobileMoney('+254700000000'),
        amount: '1.00',
        currency: 'KES',
      };
      const first = await api(t, 'POST', '/v1/transfers', { body, headers });
      expect(first.statusCode).toBe(404);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const again = await api(t, 'POST', '/v1/transfers', { body, headers });
      expect(again.statusCode).toBe(404);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(first.body);
    });

    it('replays are byte-identical, successes and refusals alike, on every write path', async () => {
      const owner = await createCustomer(t);
      const walletHeaders = { 'idempotency-key': `bytes-wallet-${backend}` };
      const wallet = await api(t, 'POST', '/v1/wallets', {
        body: { owner, currency: 'KES', metadata: { z: '1', a: '2' } },
        headers: walletHeaders,
      });
      const walletAgain = await api(t, 'POST', '/v1/wallets', {
        body: { metadata: { a: '2', z: '1' }, currency: 'KES', owner },
        headers: walletHeaders,
      });
      expect(walletAgain.headers['idempotent-replayed']).toBe('true');
      expect(walletAgain.body).toBe(wallet.body);

      const refusedHeaders = { 'idempotency-key': `bytes-refused-${backend}` };
      const body = {
        source: wallet.data.id,
        destination: mobileMoney('+254700000000'),
        amount: '5.00',
        currency: 'KES',
      };
      const refused = await api(t, 'POST', '/v1/transfers', { body, headers: refusedHeaders });
      expect(refused.statusCode).toBe(422);
      expect(refused.headers['content-type']).toContain('application/problem+json');
      const refusedAgain = await api(t, 'POST', '/v1/transfers', { body, headers: refusedHeaders });
      expect(refusedAgain.headers['idempotent-replayed']).toBe('true');
      expect(refusedAgain.headers['content-type']).toContain('application/problem+json');
      expect(refusedAgain.body).toBe(refused.body);

      const returnHeaders = { 'idempotency-key': `bytes-return-${backend}` };
      const source = await fundedWallet(t, '10.00');
      const rail = await api(t, 'POST', '/v1/transfers', {
        body: { source, destination: mobileMoney('+254700000000'), amount: '1.00', currency: 'KES' },
      });
      const early = await api(t, 'POST', `/v1/sandbox/transfers/${rail.data.id}/return`, {
        headers: returnHeaders,
      });
      expect(early.statusCode).toBe(409);
      const earlyAgain = await api(t, 'POST', `/v1/sandbox/transfers/${rail.data.id}/return`, {
        headers: returnHeaders,
      });
      expect(earlyAgain.headers['idempotent-replayed']).toBe('true');
      expect(earlyAgain.body).toBe(early.body);
    });
  });
});
