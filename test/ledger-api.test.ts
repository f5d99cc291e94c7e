/**
 * The ledger read API through HTTP: journal entries show a transfer's hold and its post or void with
 * balanced postings; accounts carry the same balances as the wallets and their nets sum to zero.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, BACKENDS, newOrganizationKey, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, drainRails, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';

const LIST_PAGE_MAX = 100;
const SYSTEM_ACCOUNT_ID = /^acct_[0-9a-z]{26}$/;

/** Amounts of one currency share an exponent, so dropping the point gives comparable minor units. */
function minor(amount: string): bigint {
  return BigInt(amount.replace('.', ''));
}

/** A transfer's entries, oldest first. */
async function entriesOf(t: TestApp, transfer: string, key = t.key): Promise<any[]> {
  const response = await api(t, 'GET', `/v1/ledger/entries?transfer=${transfer}&limit=${LIST_PAGE_MAX}`, {
    key,
  });
  expect(response.statusCode).toBe(200);
  return [...response.data.data].reverse();
}

/** Every page of a list. */
async function everything(t: TestApp, path: string, key = t.key): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const after: string = cursor === null ? '' : `&starting_after=${cursor}`;
    const page = await api(t, 'GET', `${path}${separator}limit=${LIST_PAGE_MAX}${after}`, { key });
    expect(page.statusCode, page.body).toBe(200);
    items.push(...page.data.data);
    cursor = page.data.next_cursor;
  } while (cursor !== null);
  return items;
}

/** For each currency, phase and hold release: debits equal credits. */
function expectBalanced(entry: any): void {
  const net = new Map<string, bigint>();
  for (const p of entry.postings) {
    const key = `${p.currency}/${p.phase}/${p.releases_hold}`;
    net.set(key, (net.get(key) ?? 0n) + (p.side === 'debit' ? minor(p.amount) : -minor(p.amount)));
  }
  for (const [key, value] of net) expect(value, `${entry.id} ${key}`).toBe(0n);
}

async function transferTo(t: TestApp, wallet: string, destination: unknown, amount = '100.00') {
  const response = await api(t, 'POST', '/v1/transfers', {
    body: { source: wallet, destination, amount, currency: 'KES' },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.data.id as string;
}

describe.each(BACKENDS)('the ledger API on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(async () => {
    await expectLedgerHealthy(t);
    await t.close();
  });

  it('a settled rail transfer shows its hold, then the post that makes it final', async () => {
    const wallet = await fundedWallet(t, '1000.00');
    const transfer = await transferTo(t, wallet, mobileMoney('+254700000000'), '250.00');
    await drainRails(t);
    const [hold, post, ...rest] = await entriesOf(t, transfer);
    expect(rest).toEqual([]);
    expect(hold).toMatchObject({ object: 'journal_entry', transfer, kind: 'hold', hold_entry: null });
    expect(hold.id).toMatch(/^je_[0-9a-z]{26}$/);
    expect(hold.postings).toEqual([
      {
        account: wallet,
        side: 'debit',
        phase: 'pending',
        releases_hold: false,
        amount: '250.00',
        currency: 'KES',
      },
      {
        account: expect.stringMatching(SYSTEM_ACCOUNT_ID),
        side: 'credit',
        phase: 'pending',
        releases_hold: false,
        amount: '250.00',
        currency: 'KES',
      },
    ]);
    expect(post).toMatchObject({ transfer, kind: 'post', hold_entry: hold.id });
    expect(post.postings).toEqual(
      hold.postings.map((p: any) => ({ ...p, phase: 'posted', releases_hold: true })),
    );
    for (const entry of [hold, post]) expectBalanced(entry);
    expect(Date.parse(post.created_at)).toBeGreaterThanOrEqual(Date.parse(hold.created_at));

    const clearing = hold.postings[1].account;
    const [account] = (await everything(t, '/v1/ledger/accounts?kind=rail_clearing')).filter(
      (a) => a.id === clearing,
    );
    expect(account).toMatchObject({
      kind: 'rail_clearing',
      rail: 'mobile_money',
      wallet: null,
      balance: null,
    });
  });

  it('a failed or canceled transfer shows its hold, then the void that releases it', async () => {
    const wallet = await fundedWallet(t, '500.00');
    const failed = await transferTo(t, wallet, mobileMoney('+254700000001'));
    const canceled = await transferTo(t, wallet, mobileMoney('+254711111111'));
    await api(t, 'POST', `/v1/transfers/${canceled}/cancel`);
    await drainRails(t);
    for (const transfer of [failed, canceled]) {
      const [hold, release, ...rest] = await entriesOf(t, transfer);
      expect(rest).toEqual([]);
      expect(hold.kind).toBe('hold');
      expect(release).toMatchObject({ kind: 'void', hold_entry: hold.id });
      expect(release.postings).toEqual(hold.postings.map((p: any) => ({ ...p, phase: 'voided' })));
      expectBalanced(release);
    }
    expect(await balanceOf(t, wallet)).toMatchObject({ available: '500.00', pending: '0.00' });
  });

  it('an internal transfer, a collection and a return are single final entries', async () => {
    const from = await fundedWallet(t, '100.00');
    const to = await fundedWallet(t, '0');
    const internal = await transferTo(t, from, to, '40.00');
    const [direct, ...rest] = await entriesOf(t, internal);
    expect(rest).toEqual([]);
    expect(direct).toMatchObject({ kind: 'direct', hold_entry: null });
    expect(direct.postings).toEqual([
      {
        account: from,
        side: 'debit',
        phase: 'posted',
        releases_hold: false,
        amount: '40.00',
        currency: 'KES',
      },
      {
        account: to,
        side: 'credit',
        phase: 'posted',
        releases_hold: false,
        amount: '40.00',
        currency: 'KES',
      },
    ]);

    const collection = await api(t, 'POST', `/v1/sandbox/wallets/${to}/fund`, { body: { amount: '5.00' } });
    const [collected] = await entriesOf(t, collection.data.id);
    expect(collected.kind).toBe('direct');
    expect(collected.postings.map((p: any) => [p.account, p.side])).toEqual([
      [expect.stringMatching(SYSTEM_ACCOUNT_ID), 'debit'],
      [to, 'credit'],
    ]);

    const returned = await api(t, 'POST', `/v1/sandbox/transfers/${internal}/return`);
    expect(returned.statusCode).toBe(200);
    const [, reversal] = await entriesOf(t, internal);
    expect(reversal).toMatchObject({ kind: 'reversal', hold_entry: null });
    expect(reversal.postings.map((p: any) => [p.account, p.side, p.phase])).toEqual([
      [to, 'debit', 'posted'],
      [from, 'credit', 'posted'],
    ]);
    for (const entry of [direct, collected, reversal]) expectBalanced(entry);
  });

  it("filters entries by wallet: every entry posts to the wallet's account", async () => {
    const wallet = await fundedWallet(t, '300.00');
    const settled = await transferTo(t, wallet, mobileMoney('+254700000000'));
    await drainRails(t);
    const entries = await everything(t, `/v1/ledger/entries?wallet=${wallet}`);
    expect(entries.map((e) => e.kind)).toEqual(['post', 'hold', 'direct']);
    expect(entries.slice(0, 2).every((e) => e.transfer === settled)).toBe(true);
    for (const entry of entries) {
      expect(entry.postings.some((p: any) => p.account === wallet)).toBe(true);
    }
    const ids = entries.map((e) => e.id);
    expect([...ids].sort().reverse()).toEqual(ids);
  });

  it('pages entries with next_cursor and filters them by creation time', async () => {
    const wallet = await fundedWallet(t, '300.00');
    await transferTo(t, wallet, mobileMoney('+254711111111'), '1.00');
    await transferTo(t, wallet, mobileMoney('+254711111111'), '2.00');
    const all = (await everything(t, `/v1/ledger/entries?wallet=${wallet}`)).map((e) => e.id);
    expect(all).toHaveLength(3);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const after: string = cursor === null ? '' : `&starting_after=${cursor}`;
      const page = await api(t, 'GET', `/v1/ledger/entries?wallet=${wallet}&limit=1${after}`);
      expect(page.data.data).toHaveLength(1);
      seen.push(page.data.data[0].id);
      cursor = page.data.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual(all);

    const future = encodeURIComponent(new Date(Date.now() + 60_000).toISOString());
    const none = await api(t, 'GET', `/v1/ledger/entries?wallet=${wallet}&created[gte]=${future}`);
    expect(none.data).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });

    for (const [query, param] of [
      ['wallet=cus_01m80v1f31hmw57sgkdkcnyxra', 'wallet'],
      ['transfer=wallet_01m80v1f31hmw57sgkdkcnyxra', 'transfer'],
      ['starting_after=tr_01m80v1f31hmw57sgkdkcnyxra', 'starting_after'],
      ['limit=101', 'limit'],
    ]) {
      const response = await api(t, 'GET', `/v1/ledger/entries?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.data, query).toMatchObject({ code: 'validation_error', param });
    }
  });

  it("shows each wallet account with the wallet's own balance, and nets that sum to zero", async () => {
    const wallet = await fundedWallet(t, '900.00');
    await transferTo(t, wallet, mobileMoney('+254700000003'), '100.00'); // stays held
    await drainRails(t);
    const other = await fundedWallet(t, '10', 'UGX');

    const accounts = await everything(t, '/v1/ledger/accounts');
    const ids = accounts.map((a) => a.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort().reverse()).toEqual(ids);

    const walletAccounts = accounts.filter((a) => a.kind === 'wallet');
    const wallets = await everything(t, '/v1/wallets');
    expect(walletAccounts.map((a) => a.id).sort()).toEqual(wallets.map((w: any) => w.id).sort());
    for (const account of walletAccounts) {
      const { available, pending, current, currency } = await balanceOf(t, account.id);
      expect(account).toMatchObject({ object: 'ledger_account', wallet: account.id, rail: null, currency });
      expect(account.balance).toEqual({ available, pending, current });
      expect(account.net_posted).toBe(current);
      expect(minor(account.debits_pending)).toBe(minor(pending));
    }
    expect(accounts.find((a) => a.id === wallet)).toMatchObject({
      debits_pending: '100.00',
      net_pending: '-100.00',
      balance: { available: '800.00', pending: '100.00', current: '900.00' },
    });
    expect(accounts.find((a) => a.id === other)?.balance).toEqual({
      available: '10',
      pending: '0',
      current: '10',
    });

    const systemAccounts = accounts.filter((a) => a.kind !== 'wallet');
    expect(systemAccounts.length).toBeGreaterThan(0);
    for (const account of systemAccounts) {
      expect(account.id).toMatch(SYSTEM_ACCOUNT_ID);
      expect(account).toMatchObject({ wallet: null, balance: null, rail: 'mobile_money' });
      expect(minor(account.net_posted)).toBe(minor(account.credits_posted) - minor(account.debits_posted));
    }

    // Double entry: per currency, what some accounts are owed the others hold.
    const nets = new Map<string, { posted: bigint; pending: bigint }>();
    for (const a of accounts) {
      const sum = nets.get(a.currency) ?? { posted: 0n, pending: 0n };
      nets.set(a.currency, {
        posted: sum.posted + minor(a.net_posted),
        pending: sum.pending + minor(a.net_pending),
      });
    }
    for (const [currency, sum] of nets) expect(sum, currency).toEqual({ posted: 0n, pending: 0n });
  });

  it('filters accounts by kind and currency and pages them across both id prefixes', async () => {
    await fundedWallet(t, '1.00');
    const settlement = await everything(t, '/v1/ledger/accounts?kind=rail_settlement');
    expect(settlement.length).toBeGreaterThan(0);
    expect(settlement.every((a) => a.kind === 'rail_settlement')).toBe(true);
    const ugx = await everything(t, '/v1/ledger/accounts?currency=UGX');
    expect(ugx.length).toBeGreaterThan(0);
    expect(ugx.every((a) => a.currency === 'UGX')).toBe(true);

    const all = (await everything(t, '/v1/ledger/accounts')).map((a) => a.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const after: string = cursor === null ? '' : `&starting_after=${cursor}`;
      const page = await api(t, 'GET', `/v1/ledger/accounts?limit=3${after}`);
      seen.push(...page.data.data.map((a: any) => a.id));
      cursor = page.data.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual(all);
    expect(seen.some((id) => SYSTEM_ACCOUNT_ID.test(id))).toBe(true);

    for (const [query, param] of [
      ['kind=asset', 'kind'],
      ['currency=XYZ', 'currency'],
      ['starting_after=cus_01m80v1f31hmw57sgkdkcnyxra', 'starting_after'],
    ]) {
      const response = await api(t, 'GET', `/v1/ledger/accounts?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.data, query).toMatchObject({ code: 'validation_error', param });
    }
  });

  it("another organization sees none of this organization's entries or accounts", async () => {
    const wallet = await fundedWallet(t, '50.00');
    const transfer = await transferTo(t, wallet, mobileMoney('+254711111111'), '5.00');
    const other = await newOrganizationKey(t);
    expect(await entriesOf(t, transfer, other)).toEqual([]);
    expect(await everything(t, `/v1/ledger/entries?wallet=${wallet}`, other)).toEqual([]);
    expect(await everything(t, '/v1/ledger/entries', other)).toEqual([]);
    expect(await everything(t, '/v1/ledger/accounts', other)).toEqual([]);

    const theirs = await fundedWallet(t, '7.00', 'KES', other);
    const accounts = await everything(t, '/v1/ledger/accounts', other);
    expect(accounts.map((a) => a.kind).sort()).toEqual(['rail_settlement', 'wallet']);
    expect(accounts.find((a) => a.kind === 'wallet')?.id).toBe(theirs);
    const ours = (await everything(t, '/v1/ledger/accounts')).map((a) => a.id);
    for (const account of accounts) expect(ours).not.toContain(account.id);
  });
});
