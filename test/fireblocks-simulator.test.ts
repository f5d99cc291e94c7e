/**
 * The Fireblocks simulator against Fireblocks' own TypeScript SDK (`@fireblocks/ts-sdk`, pinned as a dev
 * dependency), unmodified, with nothing changed but its base URL: vault accounts, asset wallets and their
 * addresses, transfers out with their externalTxId, the status life cycle and its signed webhooks, incoming
 * deposits; and the requests the SDK would never send (bad tokens, replays, unknown routes), signed here by
 * hand, each answered with Fireblocks' code. One test per row of docs/rails/fireblocks.md.
 */
import { createHash, createSign, createVerify, generateKeyPairSync, randomUUID } from 'node:crypto';
import http from 'node:http';
import { Fireblocks, type FireblocksError } from '@fireblocks/ts-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FIREBLOCKS_SIMULATOR_WEBHOOK_PUBLIC_KEY,
  type FireblocksSimulator,
  startFireblocksSimulator,
} from '../src/simulators/fireblocks/index.ts';

let sim: FireblocksSimulator;
let fireblocks: Fireblocks;
let receiver: http.Server;
const received: Array<{ body: string; signature: string }> = [];

beforeAll(async () => {
  sim = await startFireblocksSimulator({ stepMs: 5 });
  fireblocks = new Fireblocks({ ...sim.credentials, basePath: sim.baseUrl });
  receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        body: Buffer.concat(chunks).toString('utf8'),
        signature: String(request.headers['fireblocks-signature']),
      });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const address = receiver.address() as { port: number };
  sim.setWebhookUrl(`http://127.0.0.1:${address.port}/fireblocks`);
});

afterAll(async () => {
  await sim?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

/** The status and Fireblocks error body of a call the SDK threw for. */
async function refusal(call: Promise<unknown>): Promise<{ status?: number; body: unknown }> {
  try {
    await call;
  } catch (error) {
    const response = (error as FireblocksError<unknown>).response;
    return { status: response?.statusCode, body: response?.data };
  }
  throw new Error('the call was not refused');
}

/** A vault account with a funded asset wallet. */
async function fundedVault(assetId: string, balance: string) {
  const vault = await fireblocks.vaults.createVaultAccount({
    createVaultAccountRequest: { name: `vault-${randomUUID()}`, customerRefId: 'w_1' },
  });
  const vaultAccountId = vault.data.id as string;
  const wallet = await fireblocks.vaults.createVaultAccountAsset({ vaultAccountId, assetId });
  sim.setBalance(vaultAccountId, assetId, balance);
  return { vaultAccountId, address: wallet.data.address as string };
}

function transfer(vaultAccountId: string, amount: string, externalTxId = randomUUID()) {
  return fireblocks.transactions.createTransaction({
    transactionRequest: {
      assetId: 'USDC',
      amount,
      externalTxId,
      source: { type: 'VAULT_ACCOUNT', id: vaultAccountId },
      destination: {
        type: 'ONE_TIME_ADDRESS',
        oneTimeAddress: { address: '0x00000000000000000000000000000000000000aa' },
      },
      note: 'payout',
    },
  });
}

/** A request signed by hand, as the SDK signs one, with any claim overridden. */
async function signedRequest(
  method: string,
  path: string,
  options: { body?: string; claims?: Record<string, unknown>; apiKey?: string; secretKey?: string } = {},
) {
  const body = options.body ?? '';
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    uri: `/v1${path}`,
    nonce: randomUUID(),
    iat: now,
    exp: now + 25,
    sub: options.apiKey ?? sim.credentials.apiKey,
    bodyHash: createHash('sha256').update(body).digest('hex'),
    ...options.claims,
  };
  const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${segment({ alg: 'RS256', typ: 'JWT' })}.${segment(claims)}`;
  const signature = createSign('RSA-SHA256')
    .update(unsigned)
    .sign(options.secretKey ?? sim.credentials.secretKey, 'base64url');
  const response = await fetch(`${sim.baseUrl}${path}`, {
    method,
    headers: {
      'X-API-Key': options.apiKey ?? sim.credentials.apiKey,
      Authorization: `Bearer ${unsigned}.${signature}`,
      'Content-Type': 'application/json',
    },
    body: method === 'GET' ? undefined : body,
  });
  return { status: response.status, body: (await response.json()) as { code?: number; message?: string } };
}

describe('vault accounts through the SDK', () => {
  it('answers a POST again under the same Idempotency-Key with its first answer, creating nothing more', async () => {
    const create = (idempotencyKey: string) =>
      fireblocks.vaults.createVaultAccount({
        createVaultAccountRequest: { name: 'mkoba-idempotent', customerRefId: 'w_idem' },
        idempotencyKey,
      });
    const first = await create('idem-vault-1');
    const again = await create('idem-vault-1');
    expect(again.data).toEqual(first.data);
    const other = await create('idem-vault-2');
    expect(other.data.id).not.toBe(first.data.id);
    await expect(create('k'.repeat(41))).rejects.toMatchObject({ response: { statusCode: 400 } });
  });

  it('creates a vault account, reads it, lists it paged by name prefix', async () => {
    const created = await fireblocks.vaults.createVaultAccount({
      createVaultAccountRequest: { name: 'mkoba-wallet-1', customerRefId: 'w_1', hiddenOnUI: true },
    });
    expect(created.statusCode).toBe(200);
    expect(created.data).toMatchObject({
      name: 'mkoba-wallet-1',
      customerRefId: 'w_1',
      hiddenOnUI: true,
      assets: [],
    });
    const read = await fireblocks.vaults.getVaultAccount({ vaultAccountId: created.data.id as string });
    expect(read.data).toEqual(created.data);
    await fireblocks.vaults.createVaultAccount({ createVaultAccountRequest: { name: 'mkoba-wallet-2' } });
    const first = await fireblocks.vaults.getPagedVaultAccounts({ namePrefix: 'mkoba-wallet-', limit: 1 });
    expect(first.data.accounts?.map((vault) => vault.name)).toEqual(['mkoba-wallet-1']);
    const second = await fireblocks.vaults.getPagedVaultAccounts({
      namePrefix: 'mkoba-wallet-',
      limit: 1,
      after: first.data.paging?.after,
    });
    expect(second.data.accounts?.map((vault) => vault.name)).toEqual(['mkoba-wallet-2']);
    expect(second.data.paging).toEqual({});
  });

  it('refuses a vault without a name (1002), an unknown vault (1004), a bad page size (1000)', async () => {
    expect(await signedRequest('POST', '/vault/accounts', { body: '{}' })).toEqual({
      status: 400,
      body: { code: 1002, message: expect.any(String) },
    });
    expect(await refusal(fireblocks.vaults.getVaultAccount({ vaultAccountId: '9999' }))).toMatchObject({
      status: 404,
      body: { code: 1004 },
    });
    expect(await refusal(fireblocks.vaults.getPagedVaultAccounts({ limit: 501 }))).toMatchObject({
      status: 400,
      body: { code: 1000 },
    });
  });

  it('lists every vault at once on the older GET /v1/vault/accounts', async () => {
    const listed = await signedRequest('GET', '/vault/accounts');
    expect(listed.status).toBe(200);
    expect(Array.isArray(listed.body)).toBe(true);
  });
});

describe('asset wallets and deposit addresses through the SDK', () => {
  it('creates an asset wallet with its address, reads its balance, adds and lists addresses', async () => {
    const vault = await fireblocks.vaults.createVaultAccount({
      createVaultAccountRequest: { name: 'addresses' },
    });
    const vaultAccountId = vault.data.id as string;
    const wallet = await fireblocks.vaults.createVaultAccountAsset({ vaultAccountId, assetId: 'USDC' });
    expect(wallet.data).toMatchObject({
      id: vaultAccountId,
      address: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
    });
    const tron = await fireblocks.vaults.createVaultAccountAsset({
      vaultAccountId,
      assetId: 'TRX_USDT_S2UZ',
    });
    expect(tron.data.address).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    const balance = await fireblocks.vaults.getVaultAccountAsset({ vaultAccountId, assetId: 'USDC' });
    expect(balance.data).toMatchObject({ id: 'USDC', total: '0', available: '0', lockedAmount: '0' });
    const added = await fireblocks.vaults.createVaultAccountAssetAddress({
      vaultAccountId,
      assetId: 'USDC',
      createAddressRequest: { description: 'second', customerRefId: 'w_2' },
    });
    expect(added.data.address).not.toBe(wallet.data.address);
    const page = await fireblocks.vaults.getVaultAccountAssetAddressesPaginated({
      vaultAccountId,
      assetId: 'USDC',
      limit: 1,
    });
    expect(page.data.addresses?.map((entry) => entry.address)).toEqual([wallet.data.address]);
    expect(page.data.paging).toEqual({ after: '0' });
    const all = await signedRequest('GET', `/vault/accounts/${vaultAccountId}/USDC/addresses`);
    expect(all.body).toMatchObject([
      { address: wallet.data.address },
      { address: added.data.address, description: 'second', customerRefId: 'w_2' },
    ]);
  });

  it('refuses an unknown asset (1006), a second wallet of one asset, a balance of a missing wallet', async () => {
    const vault = await fireblocks.vaults.createVaultAccount({
      createVaultAccountRequest: { name: 'assets' },
    });
    const vaultAccountId = vault.data.id as string;
    expect(
      await refusal(fireblocks.vaults.createVaultAccountAsset({ vaultAccountId, assetId: 'NOPE' })),
    ).toMatchObject({
      status: 404,
      body: { code: 1006 },
    });
    await fireblocks.vaults.createVaultAccountAsset({ vaultAccountId, assetId: 'USDC' });
    expect(
      await refusal(fireblocks.vaults.createVaultAccountAsset({ vaultAccountId, assetId: 'USDC' })),
    ).toMatchObject({
      status: 400,
      body: { code: 1026 },
    });
    expect(
      await refusal(fireblocks.vaults.getVaultAccountAsset({ vaultAccountId, assetId: 'USDT_ERC20' })),
    ).toMatchObject({
      status: 404,
      body: { code: 1006 },
    });
  });
});

describe('transactions through the SDK', () => {
  it('moves a transfer SUBMITTED → … → COMPLETED, each change a webhook signed with the published key', async () => {
    const { vaultAccountId } = await fundedVault('USDC', '100');
    const externalTxId = randomUUID();
    const created = await transfer(vaultAccountId, '25.5', externalTxId);
    expect(created.data).toEqual({ id: expect.any(String), status: 'SUBMITTED' });
    const txId = created.data.id as string;
    const locked = await fireblocks.vaults.getVaultAccountAsset({ vaultAccountId, assetId: 'USDC' });
    expect(locked.data).toMatchObject({ total: '100', available: '74.5', lockedAmount: '25.5' });
    await sim.waitForWebhooks({ transactionId: txId, count: 5 });
    const deliveries = sim.webhooks.filter((delivery) => delivery.transactionId === txId);
    expect(deliveries.map((delivery) => [delivery.type, delivery.status])).toEqual([
      ['TRANSACTION_CREATED', 'SUBMITTED'],
      ['TRANSACTION_STATUS_UPDATED', 'PENDING_SIGNATURE'],
      ['TRANSACTION_STATUS_UPDATED', 'BROADCASTING'],
      ['TRANSACTION_STATUS_UPDATED', 'CONFIRMING'],
      ['TRANSACTION_STATUS_UPDATED', 'COMPLETED'],
    ]);
    const last = received.find((entry) => entry.body === deliveries[4]?.body);
    expect(last).toBeDefined();
    const verifier = createVerify('RSA-SHA512');
    verifier.update(last?.body ?? '');
    expect(verifier.verify(FIREBLOCKS_SIMULATOR_WEBHOOK_PUBLIC_KEY, last?.signature ?? '', 'base64')).toBe(
      true,
    );
    const event = JSON.parse(last?.body ?? '{}');
    expect(event).toMatchObject({
      type: 'TRANSACTION_STATUS_UPDATED',
      tenantId: expect.any(String),
      timestamp: expect.any(Number),
      data: { id: txId, externalTxId, status: 'COMPLETED', subStatus: 'CONFIRMED', assetId: 'USDC' },
    });
    const read = await fireblocks.transactions.getTransaction({ txId });
    expect(read.data).toMatchObject({
      id: txId,
      externalTxId,
      status: 'COMPLETED',
      subStatus: 'CONFIRMED',
      txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      source: { type: 'VAULT_ACCOUNT', id: vaultAccountId },
      destination: { type: 'ONE_TIME_ADDRESS' },
      destinationAddress: '0x00000000000000000000000000000000000000aa',
      amountInfo: { amount: '25.5', netAmount: '25.5' },
      numOfConfirmations: 12,
      note: 'payout',
    });
    const byExternal = await fireblocks.transactions.getTransactionByExternalId({ externalTxId });
    expect(byExternal.data).toEqual(read.data);
    const after = await fireblocks.vaults.getVaultAccountAsset({ vaultAccountId, assetId: 'USDC' });
    expect(after.data).toMatchObject({ total: '74.5', available: '74.5', lockedAmount: '0' });
  });

  it('reports the network fee a transaction paid: feeInfo.networkFee in feeCurrency, the native coin, once on chain', async () => {
    const { vaultAccountId } = await fundedVault('USDC', '100');
    sim.setNetworkFee('0.000315');
    try {
      const created = await transfer(vaultAccountId, '10');
      const txId = created.data.id as string;
      const submitted = await fireblocks.transactions.getTransaction({ txId });
      // Not on chain yet: nothing paid.
      expect(submitted.data).toMatchObject({ feeCurrency: 'ETH', feeInfo: { networkFee: '0' } });
      await sim.waitForStatus(txId, 'COMPLETED');
      const read = await fireblocks.transactions.getTransaction({ txId });
      expect(read.data).toMatchObject({
        feeCurrency: 'ETH',
        feeInfo: { networkFee: '0.000315', serviceFee: '0', gasPrice: expect.any(String) },
        networkFee: 0.000315,
        networkRecords: [],
      });
      // The token's own balance pays only the amount: the fee is the native coin's.
      const after = await fireblocks.vaults.getVaultAccountAsset({ vaultAccountId, assetId: 'USDC' });
      expect(after.data).toMatchObject({ total: '90' });
    } finally {
      sim.setNetworkFee('0');
    }
  });

  it('refuses a repeated externalTxId (400) and creates nothing the second time', async () => {
    const { vaultAccountId } = await fundedVault('USDC', '100');
    const externalTxId = randomUUID();
    const first = await transfer(vaultAccountId, '1', externalTxId);
    expect(await refusal(transfer(vaultAccountId, '1', externalTxId))).toMatchObject({
      status: 400,
      body: { code: 1438, message: expect.stringContaining(externalTxId) },
    });
    await sim.whenIdle();
    expect((await fireblocks.transactions.getTransactionByExternalId({ externalTxId })).data.id).toBe(
      first.data.id,
    );
    const wallet = await fireblocks.vaults.getVaultAccountAsset({ vaultAccountId, assetId: 'USDC' });
    expect(wallet.data).toMatchObject({ total: '99', lockedAmount: '0' });
  });

  it.each([
    ['13.13', 'FAILED', 'INTERNAL_ERROR'],
    ['14.14', 'CANCELLED', 'CANCELLED_BY_USER'],
    ['15.15', 'BLOCKED', 'BLOCKED_BY_POLICY'],
    ['16.16', 'REJECTED', 'REJECTED_BY_USER'],
  ])('ends amount %s %s (%s) and releases the locked amount', async (amount, status, subStatus) => {
    const { vaultAccountId } = await fundedVault('USDC', '100');
    const { data } = await transfer(vaultAccountId, amount);
    const final = await sim.waitForStatus(data.id as string, status as 'FAILED');
    expect(final.subStatus).toBe(subStatus);
    await sim.whenIdle();
    const wallet = await fireblocks.vaults.getVaultAccountAsset({ vaultAccountId, assetId: 'USDC' });
    expect(wallet.data).toMatchObject({ total: '100', lockedAmount: '0' });
  });

  it('fails a transfer larger than the available balance INSUFFICIENT_FUNDS', async () => {
    const { vaultAccountId } = await fundedVault('USDC', '10');
    const { data } = await transfer(vaultAccountId, '10.000001');
    const final = await sim.waitForStatus(data.id as string, 'FAILED');
    expect(final.subStatus).toBe('INSUFFICIENT_FUNDS');
  });

  it('completes amount 17.17 without any webhook (found by polling), sends 18.18 twice, leaves 19.19 BROADCASTING', async () => {
    const { vaultAccountId } = await fundedVault('USDC', '100');
    const silent = await transfer(vaultAccountId, '17.17');
    const twice = await transfer(vaultAccountId, '18.18');
    const stuck = await transfer(vaultAccountId, '19.19');
    await sim.whenIdle();
    const silentId = silent.data.id as string;
    expect(sim.webhooks.filter((delivery) => delivery.transactionId === silentId)).toEqual([]);
    expect((await fireblocks.transactions.getTransaction({ txId: silentId })).data.status).toBe('COMPLETED');
    expect(sim.webhooks.filter((delivery) => delivery.transactionId === twice.data.id)).toHaveLength(10);
    expect(
      (await fireblocks.transactions.getTransaction({ txId: stuck.data.id as string })).data.status,
    ).toBe('BROADCASTING');
  });

  it('refuses a bad transfer: no source vault (1004), an unknown asset (1006), a bad amount or destination', async () => {
    const { vaultAccountId } = await fundedVault('USDC', '1');
    const request = (changes: Record<string, unknown>) =>
      signedRequest('POST', '/transactions', {
        body: JSON.stringify({
          assetId: 'USDC',
          amount: '1',
          source: { type: 'VAULT_ACCOUNT', id: vaultAccountId },
          destination: { type: 'ONE_TIME_ADDRESS', oneTimeAddress: { address: '0xabc' } },
          ...changes,
        }),
      });
    expect((await request({ source: { type: 'VAULT_ACCOUNT', id: '9999' } })).body.code).toBe(1004);
    expect((await request({ assetId: 'NOPE' })).body.code).toBe(1006);
    expect(await request({ amount: '-1' })).toMatchObject({ status: 400, body: { code: 1400 } });
    expect(await request({ amount: '1.0000001' })).toMatchObject({ status: 400, body: { code: 1400 } });
    expect(await request({ destination: { type: 'VAULT_ACCOUNT' } })).toMatchObject({ status: 400 });
    const toNoVault = await request({ destination: { type: 'VAULT_ACCOUNT', id: '9999' } });
    expect(toNoVault).toMatchObject({ status: 404, body: { code: 1004 } });
    expect(await request({ operation: 'MINT' })).toMatchObject({ status: 400, body: { code: 1400 } });
    expect(await signedRequest('POST', '/transactions', { body: '[1]' })).toMatchObject({ status: 400 });
  });

  it('answers 404 for an unknown transaction id or externalTxId', async () => {
    expect(await refusal(fireblocks.transactions.getTransaction({ txId: randomUUID() }))).toMatchObject({
      status: 404,
      body: { code: 1404 },
    });
    expect(
      await refusal(fireblocks.transactions.getTransactionByExternalId({ externalTxId: 'never-sent' })),
    ).toMatchObject({ status: 404, body: { code: 1404 } });
  });
});

describe('incoming deposits', () => {
  it('announces a deposit CONFIRMING then COMPLETED, and credits the vault once completed', async () => {
    const { vaultAccountId, address } = await fundedVault('USDC', '0');
    const deposit = sim.deposit({
      vaultAccountId,
      assetId: 'USDC',
      amount: '42.5',
      sourceAddress: '0xsender',
    });
    expect(deposit).toMatchObject({
      status: 'CONFIRMING',
      destination: { type: 'VAULT_ACCOUNT', id: vaultAccountId },
      destinationAddress: address,
      source: { type: 'UNKNOWN' },
    });
    await sim.waitForStatus(deposit.id, 'COMPLETED');
    await sim.whenIdle();
    const deliveries = sim.webhooks.filter((delivery) => delivery.transactionId === deposit.id);
    expect(deliveries.map((delivery) => [delivery.type, delivery.status])).toEqual([
      ['TRANSACTION_CREATED', 'CONFIRMING'],
      ['TRANSACTION_STATUS_UPDATED', 'COMPLETED'],
    ]);
    const wallet = await fireblocks.vaults.getVaultAccountAsset({ vaultAccountId, assetId: 'USDC' });
    expect(wallet.data.total).toBe('42.5');
    const listed = await fireblocks.transactions.getTransactions({
      status: 'COMPLETED',
      destType: 'VAULT_ACCOUNT',
      destId: vaultAccountId,
      after: String(deposit.createdAt - 1),
      assets: 'USDC',
      limit: 10,
    });
    expect(listed.data.map((transaction) => transaction.id)).toEqual([deposit.id]);
    expect(await refusal(fireblocks.transactions.getTransactions({ limit: 501 }))).toMatchObject({
      status: 400,
      body: { code: 1400 },
    });
  });
});

describe('transaction history paged', () => {
  it('pages oldest first by the next-page cursor, back by prev-page, the cursor keeping the query', async () => {
    const { vaultAccountId } = await fundedVault('USDC', '0');
    const made = [];
    for (let i = 1; i <= 5; i++) {
      made.push(sim.deposit({ vaultAccountId, assetId: 'USDC', amount: `${i}` }));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await Promise.all(made.map((deposit) => sim.waitForStatus(deposit.id, 'COMPLETED')));
    await sim.whenIdle();
    const query = {
      status: 'COMPLETED',
      destId: vaultAccountId,
      orderBy: 'createdAt',
      sort: 'ASC',
      limit: 2,
    } as const;
    const first = await fireblocks.transactions.getTransactions(query);
    expect(first.data.map((t) => t.amountInfo?.amount)).toEqual(['1', '2']);
    expect(first.headers['prev-page']).toBeUndefined();
    // The cursor alone carries the filters and the order.
    const second = await fireblocks.transactions.getTransactions({
      next: first.headers['next-page'],
      limit: 2,
    });
    expect(second.data.map((t) => t.amountInfo?.amount)).toEqual(['3', '4']);
    const last = await fireblocks.transactions.getTransactions({
      ...query,
      next: second.headers['next-page'],
    });
    expect(last.data.map((t) => t.amountInfo?.amount)).toEqual(['5']);
    expect(last.headers['next-page']).toBeUndefined();
    const back = await fireblocks.transactions.getTransactions({ prev: last.headers['prev-page'], limit: 2 });
    expect(back.data.map((t) => t.amountInfo?.amount)).toEqual(['3', '4']);
    const newest = await fireblocks.transactions.getTransactions({ ...query, sort: 'DESC', limit: 3 });
    expect(newest.data.map((t) => t.amountInfo?.amount)).toEqual(['5', '4', '3']);
    expect(await refusal(fireblocks.transactions.getTransactions({ next: 'not a cursor' }))).toMatchObject({
      status: 400,
      body: { code: 1400 },
    });
  });
});

describe('request authentication', () => {
  it('accepts a hand-signed request as the SDK signs one', async () => {
    expect((await signedRequest('GET', '/vault/accounts_paged')).status).toBe(200);
  });

  type Tampering = { secretKey?: string; claims?: Record<string, unknown>; apiKey?: string };
  it.each<[string, Tampering, number]>([
    ['-1 a signature by another key', { secretKey: 'other' }, -1],
    ['-1 a body that is not the hashed one', { claims: { bodyHash: 'ab' } }, -1],
    ['-2 no sub', { claims: { sub: '' } }, -2],
    ['-4 another uri', { claims: { uri: '/v1/transactions' } }, -4],
    ['-6 a sub that is not the X-API-Key', { claims: { sub: 'someone-else' } }, -6],
    ['-7 an unknown API key', { apiKey: 'unknown' }, -7],
    ['-10 an expired token', { claims: { exp: Math.floor(Date.now() / 1000) - 1 } }, -10],
    ['-10 a token living longer than 60 s', { claims: { exp: Math.floor(Date.now() / 1000) + 120 } }, -10],
    ['-12 an iat in the future', { claims: { iat: Math.floor(Date.now() / 1000) + 60 } }, -12],
  ])('refuses %s', async (_name, options, code) => {
    const secretKey =
      options.secretKey === 'other'
        ? generateKeyPairSync('rsa', { modulusLength: 2048 })
            .privateKey.export({ type: 'pkcs8', format: 'pem' })
            .toString()
        : undefined;
    const answer = await signedRequest('GET', '/vault/accounts_paged', { ...options, secretKey });
    expect(answer).toEqual({ status: 401, body: { code, message: expect.any(String) } });
  });

  it('refuses a missing token (-3), a malformed one (-5), a replayed nonce (-7)', async () => {
    const missing = await fetch(`${sim.baseUrl}/vault/accounts_paged`, {
      headers: { 'X-API-Key': sim.credentials.apiKey },
    });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ code: -3 });
    const malformed = await fetch(`${sim.baseUrl}/vault/accounts_paged`, {
      headers: { 'X-API-Key': sim.credentials.apiKey, Authorization: 'Bearer not.a-token' },
    });
    expect(await malformed.json()).toMatchObject({ code: -5 });
    const nonce = randomUUID();
    expect((await signedRequest('GET', '/vault/accounts_paged', { claims: { nonce } })).status).toBe(200);
    expect((await signedRequest('GET', '/vault/accounts_paged', { claims: { nonce } })).body.code).toBe(-7);
  });

  it('answers an unknown route 404, a forced failure 503, and the SDK through both', async () => {
    expect((await signedRequest('GET', '/nothing/here')).status).toBe(404);
    expect((await signedRequest('GET', '/transactions/%zz')).status).toBe(404);
    sim.failNext(1, 503);
    expect(await refusal(fireblocks.vaults.getPagedVaultAccounts({}))).toMatchObject({ status: 503 });
  });
});
