/**
 * The MTN MoMo rail against the MoMo simulator, over real HTTP both ways: the adapter calls the simulator,
 * the simulator sends its callbacks to a local receiver standing in for our callback endpoint, and the
 * adapter parses what the receiver got. No mocks of fetch.
 */

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Currency } from '../src/domain/money.ts';
import type { Transfer } from '../src/domain/transferRecord.ts';
import { type MtnMomoConfig, MtnMomoError } from '../src/modules/railPartners/partners/mtnMomo/connection.ts';
import {
  minorUnitsOfMomoAmount,
  momoAmountOf,
  momoReferenceId,
} from '../src/modules/railPartners/partners/mtnMomo/protocol.ts';
import { mtnMomoAccountBalance, mtnMomoRail } from '../src/modules/railPartners/partners/mtnMomo/rail.ts';
import { MOMO_STATUS_POLL_INTERVAL_MS } from '../src/modules/railPartners/partners/mtnMomo/requests.ts';
import { guardedFetch } from '../src/outbound/guard.ts';
import { type ArrivedCallback, MalformedCallbackError, type PartnerRail } from '../src/rails/partner.ts';
import { SANDBOX_PHONE_BEHAVIOURS } from '../src/rails/sandbox.ts';
import {
  MOMO_SIMULATOR_NUMBERS,
  type MomoCallbackDelivery,
  type MomoSimulator,
  startMomoSimulator,
} from '../src/simulators/mtnMomo/index.ts';
import { mobileMoneyPayout } from './support/payouts.ts';

/** Short simulator delays, so the file stays fast. */
const TEST_PROCESSING_MS = 20;
const TEST_DELAYED_SETTLEMENT_MS = 300;
const TEST_LATE_CALLBACK_DELAY_MS = 600;
/** The adapter's per-request time limit in these tests, and a shorter one for the hanging API. */
const TEST_REQUEST_TIMEOUT_MS = 2_000;
const HANG_REQUEST_TIMEOUT_MS = 300;
/** How long past its time limit a call to the hanging API may take to give up. */
const HANG_GIVE_UP_SLACK_MS = 1_000;

const NUMBER = {
  succeed: '+256770000000',
  payeeNotFound: '+256770000001',
  notEnoughFunds: '+256770000002',
  stayPending: '+256770000003',
  duplicateCallback: '+256770000006',
  lateCallback: '+256770000007',
  malformedCallback: '+256770000008',
  noCallback: '+256770000009',
  serverError500: '+256770000010',
  serverError503: '+256770000011',
  hang: '+256770000012',
  approvalRejected: '+256770000013',
  expired: '+256770000014',
  refusedOnPost: '+256770000015',
  notActive: '+256770000016',
} as const;

interface ReceivedCallback {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Our callback endpoint's stand-in: records every request, answers 200. */
async function startCallbackReceiver(): Promise<{
  url: string;
  received: ReceivedCallback[];
  close(): Promise<void>;
}> {
  const received: ReceivedCallback[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push({
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body,
      });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let sim: MomoSimulator;
let receiver: Awaited<ReturnType<typeof startCallbackReceiver>>;
let callbackPath: string;
let rail: PartnerRail;

function configFor(simulator: MomoSimulator, overrides: Partial<MtnMomoConfig> = {}): MtnMomoConfig {
  return {
    fetch: guardedFetch('allow_loopback'),
    baseUrl: simulator.url,
    targetEnvironment: simulator.credentials.targetEnvironment,
    apiUser: simulator.credentials.apiUser,
    apiKey: simulator.credentials.apiKey,
    collectionSubscriptionKey: simulator.credentials.collectionSubscriptionKey,
    disbursementSubscriptionKey: simulator.credentials.disbursementSubscriptionKey,
    requestTimeoutMs: TEST_REQUEST_TIMEOUT_MS,
    ...overrides,
  };
}

function newRail(overrides: Partial<MtnMomoConfig> = {}): PartnerRail {
  return mtnMomoRail(configFor(sim, overrides), { baseUrl: `${receiver.url}${callbackPath}` });
}

beforeAll(async () => {
  sim = await startMomoSimulator({
    processingMs: TEST_PROCESSING_MS,
    delayedSettlementMs: TEST_DELAYED_SETTLEMENT_MS,
    lateCallbackDelayMs: TEST_LATE_CALLBACK_DELAY_MS,
  });
  receiver = await startCallbackReceiver();
  callbackPath = `/callbacks/mtn_momo/cbt_${randomUUID().replaceAll('-', '')}`;
  rail = newRail();
});

afterAll(async () => {
  await sim?.close();
  await receiver?.close();
});

function transferTo(
  phone: string,
  amountMinor = 25_000n,
  currency: Currency = 'UGX',
  network = 'mtn',
): Transfer {
  return mobileMoneyPayout(phone, network as 'mtn', {
    id: `tr_${randomUUID()}`,
    organizationId: 'org_momo_test',
    sourceWalletId: 'wal_momo_test',
    amountMinor,
    currency,
    network,
    ledgerState: 'posted',
  });
}

/** Submits a payout and returns the transfer as the worker records it: with the rail's reference. */
async function submitted(phone: string, amountMinor?: bigint, currency?: Currency) {
  const transfer = transferTo(phone, amountMinor, currency);
  const now = new Date();
  const result = await rail.submit({ idempotencyReference: transfer.id, transfer }, now);
  if (!result.accepted) throw new Error(`refused: ${result.failureCode}`);
  return { transfer: { ...transfer, railReference: result.reference }, result, now };
}

function collectionRequest(payerPhone: string, amountMinor = 5_000n, currency: Currency = 'UGX') {
  return {
    idempotencyReference: `col_${randomUUID()}`,
    amountMinor,
    currency,
    payerPhone,
    reference: 'INV-2041',
    description: "Invoice INV-2041, Kato's shop",
  };
}

/** The receiver's copy of a delivery, as our endpoint would hand it to parseCallback. */
function arrived(delivery: MomoCallbackDelivery): ArrivedCallback {
  const entry = receiver.received.find((candidate) => candidate.body === delivery.body);
  if (!entry) throw new Error(`the receiver did not get the callback about ${delivery.externalId}`);
  expect(entry.method).toBe(delivery.method);
  expect(entry.path.startsWith(`${callbackPath}/`)).toBe(true);
  const headers = Object.fromEntries(
    Object.entries(entry.headers).map(([name, value]) => [
      name,
      Array.isArray(value) ? value.join(', ') : value,
    ]),
  );
  return { path: entry.path.slice(callbackPath.length + 1), headers, rawBody: entry.body };
}

async function callbacksAbout(externalId: string, count = 1): Promise<ArrivedCallback[]> {
  const deliveries = await sim.waitForCallbacks({ externalId, count });
  return deliveries.map(arrived);
}

function requestsTo(path: string, from = 0) {
  return sim.requests.slice(from).filter((request) => request.path === path);
}

function postsFor(referenceId: string) {
  return sim.requests.filter(
    (request) => request.method === 'POST' && request.headers['x-reference-id'] === referenceId,
  );
}

const laterBy = (now: Date, ms: number) => new Date(now.getTime() + ms);

describe('access tokens', () => {
  it('takes one token per product for many calls, and a new one after they expire', async () => {
    const start = sim.requests.length;
    const fresh = newRail();
    const transfers = Array.from({ length: 5 }, () => transferTo(NUMBER.succeed));
    await Promise.all(
      transfers.map((transfer) => fresh.submit({ idempotencyReference: transfer.id, transfer }, new Date())),
    );
    await fresh.collect(collectionRequest(NUMBER.succeed), new Date());
    await fresh.collect(collectionRequest(NUMBER.succeed), new Date());
    expect(requestsTo('/disbursement/token/', start)).toHaveLength(1);
    expect(requestsTo('/collection/token/', start)).toHaveLength(1);

    sim.expireTokens();
    const expiredAt = sim.requests.length;
    const afterExpiry = transferTo(NUMBER.succeed);
    const result = await fresh.submit(
      { idempotencyReference: afterExpiry.id, transfer: afterExpiry },
      new Date(),
    );
    expect(result.accepted).toBe(true);
    // A payout's first call is the account-holder check: it gets the 401, a fresh token and one more try.
    const activePath = '/disbursement/v1_0/accountholder/msisdn/256770000000/active';
    expect(requestsTo(activePath, expiredAt).map((request) => request.status)).toEqual([401, 200]);
    const reference = momoReferenceId(afterExpiry.id, 'disbursement');
    expect(postsFor(reference).map((request) => request.status)).toEqual([202]);
    expect(requestsTo('/disbursement/token/', start)).toHaveLength(2);
    expect(requestsTo('/collection/token/', start)).toHaveLength(1);
    // A POST that gets the 401 (a collection makes no check first) gets a fresh token and one more try too.
    sim.expireTokens();
    const collection = collectionRequest(NUMBER.succeed);
    expect(await fresh.collect(collection, new Date())).toMatchObject({ accepted: true });
    const collectionReference = momoReferenceId(collection.idempotencyReference, 'collection');
    expect(postsFor(collectionReference).map((request) => request.status)).toEqual([401, 202]);
    expect(requestsTo('/collection/token/', start)).toHaveLength(2);
    // The token request is HTTP Basic with the API user and key, under the product's subscription key.
    const [tokenRequest] = requestsTo('/disbursement/token/', start);
    const basic = Buffer.from(`${sim.credentials.apiUser}:${sim.credentials.apiKey}`).toString('base64');
    expect(tokenRequest?.headers.authorization).toBe(`Basic ${basic}`);
    expect(tokenRequest?.headers['ocp-apim-subscription-key']).toBe(
      sim.credentials.disbursementSubscriptionKey,
    );
  });

  it('fails clearly on a wrong subscription key, API key or target environment', async () => {
    const transfer = transferTo(NUMBER.succeed);
    const request = { idempotencyReference: transfer.id, transfer };
    const wrongKey = newRail({ disbursementSubscriptionKey: 'not-the-key' });
    await expect(wrongKey.submit(request, new Date())).rejects.toThrow(
      /refused the disbursement credentials.*invalid subscription key/,
    );
    const wrongApiKey = newRail({ apiKey: 'not-the-api-key' });
    await expect(wrongApiKey.collect(collectionRequest(NUMBER.succeed), new Date())).rejects.toThrow(
      /refused the collection credentials.*login_failed/,
    );
    const wrongEnvironment = newRail({ targetEnvironment: 'mtnnowhere' });
    await expect(wrongEnvironment.submit(request, new Date())).rejects.toThrow(
      /HTTP 500: NOT_ALLOWED_TARGET_ENVIRONMENT/,
    );
    await expect(wrongKey.submit(request, new Date())).rejects.toBeInstanceOf(MtnMomoError);
    expect(sim.resources('disbursement').some((resource) => resource.externalId === transfer.id)).toBe(false);
  });
});

describe('payouts (disbursement transfer)', () => {
  it('submits a transfer in MTN shape; its callback parses to settled', async () => {
    const { transfer, result, now } = await submitted(NUMBER.succeed, 25_000n);
    const reference = momoReferenceId(transfer.id, 'disbursement');
    expect(result).toEqual({
      accepted: true,
      reference,
      checkAt: laterBy(now, MOMO_STATUS_POLL_INTERVAL_MS),
    });
    const [post] = postsFor(reference);
    expect(post?.path).toBe('/disbursement/v1_0/transfer');
    expect(post?.status).toBe(202);
    expect(post?.headers['x-callback-url']).toBe(`${receiver.url}${callbackPath}/disbursement`);
    // The simulator stands for MTN Uganda unless told otherwise (UGX, as these transfers are).
    expect(post?.headers['x-target-environment']).toBe('mtnuganda');
    expect(post?.headers.authorization).toMatch(/^Bearer /);
    expect(JSON.parse(post?.body ?? '')).toEqual({
      amount: '25000',
      currency: 'UGX',
      externalId: transfer.id,
      payee: { partyIdType: 'MSISDN', partyId: '256770000000' },
      payerMessage: transfer.id,
      payeeNote: transfer.id,
    });

    const [callback] = await callbacksAbout(transfer.id);
    expect(callback?.path).toBe('disbursement');
    const report = rail.parseCallback(callback as ArrivedCallback);
    expect(report).toEqual({
      kind: 'payout',
      reference,
      idempotencyReference: transfer.id,
      outcome: { kind: 'settled' },
      partnerTransactionId: sim.resource('disbursement', reference)?.financialTransactionId,
      amountMinor: 25_000n,
    });
    expect(sim.callbacks.find((delivery) => delivery.externalId === transfer.id)?.method).toBe('PUT');
  });

  it('checks by GET: PENDING is processing, SUCCESSFUL settled, FAILED failed with its code', async () => {
    const pending = await submitted(NUMBER.stayPending);
    const settles = await submitted(NUMBER.succeed);
    const fails = await submitted(NUMBER.notEnoughFunds);
    await sim.whenIdle();
    const now = new Date();
    expect(await rail.check(pending.transfer, now)).toEqual({
      kind: 'processing',
      checkAt: laterBy(now, MOMO_STATUS_POLL_INTERVAL_MS),
    });
    expect(await rail.check(settles.transfer, now)).toEqual({ kind: 'settled' });
    expect(await rail.check(fails.transfer, now)).toEqual({
      kind: 'failed',
      failureCode: 'insufficient_funds',
    });
  });

  it('mirrors every sandbox phone behaviour on an MTN number, with the sandbox failure code', async () => {
    const mirrored = Object.entries(SANDBOX_PHONE_BEHAVIOURS).map(([sandboxPhone, behaviour]) => {
      const entry = Object.entries(MOMO_SIMULATOR_NUMBERS).find(
        ([, number]) => number.mirrors === sandboxPhone,
      );
      if (!entry) throw new Error(`no MoMo number mirrors ${sandboxPhone}`);
      return { momoPhone: entry[0], behaviour };
    });
    expect(mirrored).toHaveLength(Object.keys(SANDBOX_PHONE_BEHAVIOURS).length);

    await Promise.all(
      mirrored.map(async ({ momoPhone, behaviour }) => {
        const { transfer } = await submitted(momoPhone);
        switch (behaviour.kind) {
          case 'settle': {
            const [callback] = await callbacksAbout(transfer.id);
            expect(rail.parseCallback(callback as ArrivedCallback)).toMatchObject({
              outcome: { kind: 'settled' },
            });
            expect(await rail.check(transfer, new Date())).toEqual({ kind: 'settled' });
            return;
          }
          case 'fail': {
            const expected = { kind: 'failed', failureCode: behaviour.failureCode };
            const [callback] = await callbacksAbout(transfer.id);
            expect(rail.parseCallback(callback as ArrivedCallback)).toMatchObject({ outcome: expected });
            expect(await rail.check(transfer, new Date())).toEqual(expected);
            return;
          }
          case 'timeout': {
            expect(await rail.check(transfer, new Date())).toMatchObject({ kind: 'processing' });
            return;
          }
          case 'settle_after': {
            expect(await rail.check(transfer, new Date())).toMatchObject({ kind: 'processing' });
            const [callback] = await callbacksAbout(transfer.id);
            expect(rail.parseCallback(callback as ArrivedCallback)).toMatchObject({
              outcome: { kind: 'settled' },
            });
            expect(await rail.check(transfer, new Date())).toEqual({ kind: 'settled' });
            return;
          }
        }
      }),
    );
    // The time-out number stays PENDING for ever: nothing is scheduled for it, no callback ever comes.
    await sim.whenIdle();
    const stuck = sim
      .resources('disbursement')
      .filter((resource) => resource.payee?.partyId === '256770000003');
    expect(stuck.length).toBeGreaterThan(0);
    for (const resource of stuck) {
      expect(resource.status).toBe('PENDING');
      expect(sim.callbacks.some((delivery) => delivery.referenceId === resource.referenceId)).toBe(false);
    }
  });

  it('answers a repeated submit with the same reference: 409 from MTN, one payment', async () => {
    const transfer = transferTo(NUMBER.succeed);
    const now = new Date();
    const first = await rail.submit({ idempotencyReference: transfer.id, transfer }, now);
    // Another worker (its own token cache) asks again, as after a lost answer or an expired claim.
    const second = await newRail().submit({ idempotencyReference: transfer.id, transfer }, now);
    const third = await rail.submit({ idempotencyReference: transfer.id, transfer }, now);
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    const reference = momoReferenceId(transfer.id, 'disbursement');
    expect(postsFor(reference).map((request) => request.status)).toEqual([202, 409, 409]);
    expect(requestsTo(`/disbursement/v1_0/transfer/${reference}`).map((request) => request.status)).toEqual([
      200, 200,
    ]);
    expect(
      sim.resources('disbursement').filter((resource) => resource.externalId === transfer.id),
    ).toHaveLength(1);
    await callbacksAbout(transfer.id);
  });

  it('throws on a 500 or 503 and on a failing gateway; the retry makes one payment', async () => {
    for (const phone of [NUMBER.serverError500, NUMBER.serverError503]) {
      const transfer = transferTo(phone);
      const expected = phone === NUMBER.serverError500 ? /HTTP 500: INTERNAL_PROCESSING_ERROR/ : /HTTP 503/;
      await expect(rail.submit({ idempotencyReference: transfer.id, transfer }, new Date())).rejects.toThrow(
        expected,
      );
      expect(sim.resources('disbursement').some((resource) => resource.externalId === transfer.id)).toBe(
        false,
      );
    }

    const transfer = transferTo(NUMBER.succeed);
    const request = { idempotencyReference: transfer.id, transfer };
    // The gateway fails the payout's account-holder check (which it then goes on without) and its POST.
    sim.failNext(2, 503);
    await expect(rail.submit(request, new Date())).rejects.toThrow(/SERVICE_UNAVAILABLE/);
    const retried = await rail.submit(request, new Date());
    expect(retried).toMatchObject({
      accepted: true,
      reference: momoReferenceId(transfer.id, 'disbursement'),
    });
    expect(
      sim.resources('disbursement').filter((resource) => resource.externalId === transfer.id),
    ).toHaveLength(1);
  });

  it('gives up on an API that never answers within its time limit', async () => {
    const impatient = newRail({ requestTimeoutMs: HANG_REQUEST_TIMEOUT_MS });
    const transfer = transferTo(NUMBER.hang);
    const startedAt = Date.now();
    await expect(
      impatient.submit({ idempotencyReference: transfer.id, transfer }, new Date()),
    ).rejects.toThrow(
      new RegExp(`did not answer POST /disbursement/v1_0/transfer within ${HANG_REQUEST_TIMEOUT_MS} ms`),
    );
    expect(Date.now() - startedAt).toBeLessThan(HANG_REQUEST_TIMEOUT_MS * 2 + HANG_GIVE_UP_SLACK_MS);
  });

  it('reads a refusal: 400 with MTN code, or a 500 refusal that GET confirms made nothing', async () => {
    const refused = transferTo(NUMBER.refusedOnPost);
    expect(await rail.submit({ idempotencyReference: refused.id, transfer: refused }, new Date())).toEqual({
      accepted: false,
      failureCode: 'recipient_not_registered',
    });
    const reference = momoReferenceId(refused.id, 'disbursement');
    expect(postsFor(reference).map((request) => request.status)).toEqual([500]);
    expect(requestsTo(`/disbursement/v1_0/transfer/${reference}`).map((request) => request.status)).toEqual([
      404,
    ]);

    // Not an MSISDN with its country code: MTN names it PAYEE_NOT_FOUND.
    const shortNumber = transferTo('+2567');
    expect(
      await rail.submit({ idempotencyReference: shortNumber.id, transfer: shortNumber }, new Date()),
    ).toEqual({
      accepted: false,
      failureCode: 'recipient_not_registered',
    });

    const otherNetwork = transferTo(NUMBER.succeed, 25_000n, 'UGX', 'airtel');
    expect(
      await rail.submit({ idempotencyReference: otherNetwork.id, transfer: otherNetwork }, new Date()),
    ).toEqual({ accepted: false, failureCode: 'destination_not_supported' });
  });
});

describe('the account: the account-holder check before a payout, and balances', () => {
  const activeOf = (msisdn: string) => `/disbursement/v1_0/accountholder/msisdn/${msisdn}/active`;

  it('fails a payout to a payee MTN says is not active with recipient_not_active, making nothing', async () => {
    for (const phone of [NUMBER.notActive, '+46733123450', '+46733123451']) {
      const transfer = transferTo(phone);
      expect(await rail.submit({ idempotencyReference: transfer.id, transfer }, new Date()), phone).toEqual({
        accepted: false,
        failureCode: 'recipient_not_active',
      });
      expect(requestsTo(activeOf(phone.slice(1))).at(-1)?.status).toBe(200);
      expect(postsFor(momoReferenceId(transfer.id, 'disbursement'))).toHaveLength(0);
    }
  });

  it('goes on without the check when it has no answer: MTN decides the transfer', async () => {
    for (const phone of ['+46733123452', '+46733123454', '+46733123455']) {
      const transfer = transferTo(phone);
      const result = await rail.submit({ idempotencyReference: transfer.id, transfer }, new Date());
      expect(result, phone).toMatchObject({ accepted: true });
      expect(requestsTo(activeOf(phone.slice(1))).at(-1)?.status).toBeGreaterThanOrEqual(500);
    }
  });

  it('answers accepted for a payout an earlier attempt made, even once the payee is not active', async () => {
    const transfer = transferTo(NUMBER.notActive);
    const reference = momoReferenceId(transfer.id, 'disbursement');
    // The earlier attempt's POST, as the adapter sends it, reached MTN before the payee stopped being active.
    const token = await fetch(`${sim.url}/disbursement/token/`, {
      method: 'POST',
      headers: {
        Authorization: `Basic ${Buffer.from(`${sim.credentials.apiUser}:${sim.credentials.apiKey}`).toString('base64')}`,
        'Ocp-Apim-Subscription-Key': sim.credentials.disbursementSubscriptionKey,
      },
    });
    const { access_token: accessToken } = (await token.json()) as { access_token: string };
    const made = await fetch(`${sim.url}/disbursement/v1_0/transfer`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${accessToken}`,
        'X-Reference-Id': reference,
        'X-Target-Environment': sim.credentials.targetEnvironment,
        'Ocp-Apim-Subscription-Key': sim.credentials.disbursementSubscriptionKey,
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({
        amount: '25000',
        currency: 'UGX',
        externalId: transfer.id,
        payee: { partyIdType: 'MSISDN', partyId: NUMBER.notActive.slice(1) },
      }),
    });
    expect(made.status).toBe(202);
    const now = new Date();
    expect(await rail.submit({ idempotencyReference: transfer.id, transfer }, now)).toEqual({
      accepted: true,
      reference,
      checkAt: laterBy(now, MOMO_STATUS_POLL_INTERVAL_MS),
    });
    expect(
      sim.resources('disbursement').filter((resource) => resource.externalId === transfer.id),
    ).toHaveLength(1);
    await sim.whenIdle();
    expect(await rail.check({ ...transfer, railReference: reference }, new Date())).toEqual({
      kind: 'failed',
      failureCode: 'recipient_not_allowed',
    });
  });

  it("reads MTN's sandbox test numbers' outcomes with their failure codes", async () => {
    const payout = await submitted('+46733123457');
    const [callback] = await callbacksAbout(payout.transfer.id);
    expect(rail.parseCallback(callback as ArrivedCallback)).toMatchObject({
      outcome: { kind: 'failed', failureCode: 'recipient_not_registered' },
    });
    const request = collectionRequest('+46733123451');
    const result = await rail.collect(request, new Date());
    if (!result.accepted) throw new Error(`refused: ${result.failureCode}`);
    await callbacksAbout(request.idempotencyReference);
    expect(await rail.checkCollection(result.reference, request.idempotencyReference, new Date())).toEqual({
      kind: 'failed',
      failureCode: 'payer_declined',
    });
  });

  it('reads a product account balance exactly, in minor units', async () => {
    const accounts = await startMomoSimulator({
      targetEnvironment: 'mtnghana',
      balances: { disbursement: '1500.75', collection: '-5' },
    });
    try {
      const config = configFor(accounts);
      expect(await mtnMomoAccountBalance(config, 'disbursement')).toEqual({
        currency: 'GHS',
        availableMinor: 150_075n,
      });
      expect(await mtnMomoAccountBalance(config, 'collection')).toEqual({
        currency: 'GHS',
        availableMinor: -500n,
      });
      accounts.setBalance('disbursement', '1.505');
      await expect(mtnMomoAccountBalance(config, 'disbursement')).rejects.toThrow(/not a GHS amount/);
      await expect(
        mtnMomoAccountBalance(configFor(accounts, { targetEnvironment: 'mtnuganda' }), 'collection'),
      ).rejects.toThrow(/HTTP 500: NOT_ALLOWED_TARGET_ENVIRONMENT/);
    } finally {
      await accounts.close();
    }
  });
});

describe('callbacks', () => {
  it('throws MalformedCallbackError for a callback that is not MTN shape', async () => {
    const { transfer } = await submitted(NUMBER.malformedCallback);
    const [callback] = await callbacksAbout(transfer.id);
    expect(() => rail.parseCallback(callback as ArrivedCallback)).toThrow(MalformedCallbackError);

    const good = {
      amount: '100',
      currency: 'UGX',
      financialTransactionId: '42',
      externalId: 'tr_1',
      payee: { partyIdType: 'MSISDN', partyId: '256770000000' },
      status: 'SUCCESSFUL',
    };
    const parse = (body: unknown, path = 'disbursement') =>
      rail.parseCallback({
        path,
        headers: {},
        rawBody: typeof body === 'string' ? body : JSON.stringify(body),
      });
    expect(parse(good)).toMatchObject({ kind: 'payout', outcome: { kind: 'settled' } });
    for (const [body, path] of [
      [good, 'b2c/result'],
      ['not json', 'disbursement'],
      [[good], 'disbursement'],
      [{ ...good, status: 'DONE' }, 'disbursement'],
      [{ ...good, externalId: undefined }, 'disbursement'],
      [{ ...good, currency: 'XYZ' }, 'disbursement'],
      [{ ...good, amount: '1.50' }, 'disbursement'],
      [{ ...good, amount: '-5' }, 'disbursement'],
    ] as const) {
      expect(() => parse(body, path), JSON.stringify({ body, path })).toThrow(MalformedCallbackError);
    }
  });

  it('reads MTN reason codes as strings or ErrorReason objects; an unknown one is partner_rejected', () => {
    const failed = (reason: unknown) =>
      rail.parseCallback({
        path: '/collection/',
        headers: {},
        rawBody: JSON.stringify({
          amount: 100,
          currency: 'EUR',
          externalId: 'col_1',
          status: 'FAILED',
          reason,
        }),
      });
    expect(failed('NOT_ENOUGH_FUNDS')).toMatchObject({
      kind: 'collection',
      outcome: { kind: 'failed', failureCode: 'insufficient_funds' },
      amountMinor: 10_000n,
    });
    expect(failed({ code: 'PAYER_LIMIT_REACHED', message: 'Limit reached' })).toMatchObject({
      outcome: { kind: 'failed', failureCode: 'limit_exceeded' },
    });
    expect(failed('SOMETHING_NEW')).toMatchObject({ outcome: { failureCode: 'partner_rejected' } });
    expect(failed('constructor')).toMatchObject({ outcome: { failureCode: 'partner_rejected' } });
    expect(failed(undefined)).toMatchObject({ outcome: { failureCode: 'partner_rejected' } });
    expect(
      rail.parseCallback({
        path: 'collection',
        headers: {},
        rawBody: JSON.stringify({ amount: '1', currency: 'EUR', externalId: 'col_2', status: 'PENDING' }),
      }),
    ).toEqual({ kind: 'ignored', reason: 'MTN MoMo reported col_2 still PENDING' });
  });

  it('parses a duplicate callback to the identical report', async () => {
    const { transfer } = await submitted(NUMBER.duplicateCallback);
    const [first, second] = await callbacksAbout(transfer.id, 2);
    const report = rail.parseCallback(first as ArrivedCallback);
    expect(report).toMatchObject({ outcome: { kind: 'settled' } });
    expect(rail.parseCallback(second as ArrivedCallback)).toEqual(report);
  });

  it('resolves a payout whose callback never comes by check', async () => {
    const { transfer } = await submitted(NUMBER.noCallback);
    await sim.whenIdle();
    expect(sim.callbacks.some((delivery) => delivery.externalId === transfer.id)).toBe(false);
    expect(await rail.check(transfer, new Date())).toEqual({ kind: 'settled' });
  });

  it('resolves by check before a late callback, which then agrees', async () => {
    const { transfer } = await submitted(NUMBER.lateCallback);
    await vi.waitFor(
      async () => expect(await rail.check(transfer, new Date())).toEqual({ kind: 'settled' }),
      {
        timeout: TEST_LATE_CALLBACK_DELAY_MS,
        interval: TEST_PROCESSING_MS,
      },
    );
    expect(sim.callbacks.some((delivery) => delivery.externalId === transfer.id)).toBe(false);
    const [callback] = await callbacksAbout(transfer.id);
    expect(rail.parseCallback(callback as ArrivedCallback)).toMatchObject({
      kind: 'payout',
      idempotencyReference: transfer.id,
      outcome: { kind: 'settled' },
    });
  });
});

describe('collections (request-to-pay)', () => {
  it('collects: a request-to-pay in MTN shape, its callback and checkCollection settled', async () => {
    const request = collectionRequest(NUMBER.succeed);
    const now = new Date();
    const result = await rail.collect(request, now);
    const reference = momoReferenceId(request.idempotencyReference, 'collection');
    expect(result).toEqual({
      accepted: true,
      reference,
      checkAt: laterBy(now, MOMO_STATUS_POLL_INTERVAL_MS),
    });
    const [post] = postsFor(reference);
    expect(post?.path).toBe('/collection/v1_0/requesttopay');
    expect(post?.headers['x-callback-url']).toBe(`${receiver.url}${callbackPath}/collection`);
    expect(post?.headers['ocp-apim-subscription-key']).toBe(sim.credentials.collectionSubscriptionKey);
    expect(JSON.parse(post?.body ?? '')).toEqual({
      amount: '5000',
      currency: 'UGX',
      externalId: request.idempotencyReference,
      payer: { partyIdType: 'MSISDN', partyId: '256770000000' },
      // MTN refuses an apostrophe; the payer reads the description without it.
      payerMessage: 'Invoice INV-2041, Kato s shop',
      payeeNote: 'INV-2041',
    });

    const [callback] = await callbacksAbout(request.idempotencyReference);
    expect(callback?.path).toBe('collection');
    expect(rail.parseCallback(callback as ArrivedCallback)).toEqual({
      kind: 'collection',
      reference,
      idempotencyReference: request.idempotencyReference,
      outcome: { kind: 'settled' },
      partnerTransactionId: sim.resource('collection', reference)?.financialTransactionId,
      amountMinor: 5_000n,
    });
    expect(await rail.checkCollection(reference, request.idempotencyReference, new Date())).toEqual({
      kind: 'settled',
    });
  });

  it('reads APPROVAL_REJECTED and EXPIRED from callbacks and checkCollection', async () => {
    for (const [phone, failureCode] of [
      [NUMBER.approvalRejected, 'payer_declined'],
      [NUMBER.expired, 'payer_approval_expired'],
      [NUMBER.payeeNotFound, 'payer_not_registered'],
    ] as const) {
      const request = collectionRequest(phone);
      const result = await rail.collect(request, new Date());
      if (!result.accepted) throw new Error(`refused: ${result.failureCode}`);
      const [callback] = await callbacksAbout(request.idempotencyReference);
      expect(rail.parseCallback(callback as ArrivedCallback)).toMatchObject({
        kind: 'collection',
        reference: result.reference,
        outcome: { kind: 'failed', failureCode },
      });
      expect(await rail.checkCollection(result.reference, request.idempotencyReference, new Date())).toEqual({
        kind: 'failed',
        failureCode,
      });
    }
    // APPROVAL_REJECTED is a payer's answer: the same number takes payouts.
    const payout = await submitted(NUMBER.approvalRejected);
    await callbacksAbout(payout.transfer.id);
    expect(await rail.check(payout.transfer, new Date())).toEqual({ kind: 'settled' });
  });

  it('checkCollection of a pending request, and a collection refused on POST', async () => {
    const pending = collectionRequest(NUMBER.stayPending);
    const result = await rail.collect(pending, new Date());
    if (!result.accepted) throw new Error(`refused: ${result.failureCode}`);
    const now = new Date();
    expect(await rail.checkCollection(result.reference, pending.idempotencyReference, now)).toEqual({
      kind: 'processing',
      checkAt: laterBy(now, MOMO_STATUS_POLL_INTERVAL_MS),
    });
    expect(await rail.collect(collectionRequest(NUMBER.refusedOnPost), new Date())).toEqual({
      accepted: false,
      failureCode: 'payer_not_registered',
    });
  });
});

describe('amounts and references', () => {
  it('converts minor units to MoMo amounts and back exactly, by the currency exponent', async () => {
    expect(momoAmountOf(150_075n, 'GHS')).toBe('1500.75');
    expect(momoAmountOf(150_050n, 'GHS')).toBe('1500.5');
    expect(momoAmountOf(150_000n, 'GHS')).toBe('1500');
    expect(momoAmountOf(5n, 'GHS')).toBe('0.05');
    expect(momoAmountOf(1_500n, 'UGX')).toBe('1500');
    expect(momoAmountOf(0n, 'UGX')).toBeUndefined();
    expect(minorUnitsOfMomoAmount('1500.75', 'GHS')).toBe(150_075n);
    expect(minorUnitsOfMomoAmount('1500.5', 'GHS')).toBe(150_050n);
    expect(minorUnitsOfMomoAmount('1500', 'GHS')).toBe(150_000n);
    expect(minorUnitsOfMomoAmount('1500.00', 'UGX')).toBe(1_500n);
    expect(minorUnitsOfMomoAmount('1.50', 'UGX')).toBeUndefined();
    expect(minorUnitsOfMomoAmount('1.505', 'GHS')).toBeUndefined();
    expect(minorUnitsOfMomoAmount('1e3', 'GHS')).toBeUndefined();

    // Over the wire both ways: GHS to an MTN Ghana number, through MTN Ghana (whose accounts hold GHS), the
    // callback's amount back in pesewas.
    const ghana = await startMomoSimulator({
      targetEnvironment: 'mtnghana',
      processingMs: TEST_PROCESSING_MS,
    });
    try {
      const ghanaRail = mtnMomoRail(configFor(ghana), { baseUrl: `${receiver.url}${callbackPath}` });
      const transfer = transferTo('+233240000001', 150_075n, 'GHS');
      const result = await ghanaRail.submit({ idempotencyReference: transfer.id, transfer }, new Date());
      expect(result.accepted).toBe(true);
      const post = ghana.requests.find(
        (request) => request.headers['x-reference-id'] === momoReferenceId(transfer.id, 'disbursement'),
      );
      expect(JSON.parse(post?.body ?? '')).toMatchObject({ amount: '1500.75', currency: 'GHS' });
      const [delivery] = await ghana.waitForCallbacks({ externalId: transfer.id });
      expect(ghanaRail.parseCallback(arrived(delivery as MomoCallbackDelivery))).toMatchObject({
        amountMinor: 150_075n,
      });
    } finally {
      await ghana.close();
    }
  });

  it('refuses an amount or currency MoMo cannot carry, without calling MTN', async () => {
    const start = sim.requests.length;
    const zero = transferTo(NUMBER.succeed, 0n);
    expect(await rail.submit({ idempotencyReference: zero.id, transfer: zero }, new Date())).toEqual({
      accepted: false,
      failureCode: 'amount_not_supported',
    });
    const stablecoin = transferTo(NUMBER.succeed, 1_000_001n, 'USDC');
    expect(
      await rail.submit({ idempotencyReference: stablecoin.id, transfer: stablecoin }, new Date()),
    ).toEqual({
      accepted: false,
      failureCode: 'currency_not_supported',
    });
    expect(await rail.collect(collectionRequest(NUMBER.succeed, 0n), new Date())).toEqual({
      accepted: false,
      failureCode: 'amount_not_supported',
    });
    expect(await rail.collect(collectionRequest(NUMBER.succeed, 100n, 'KES'), new Date())).toEqual({
      accepted: false,
      failureCode: 'currency_not_supported',
    });
    expect(sim.requests.length).toBe(start);
  });

  it("reads INVALID_CURRENCY (UGX to MTN's EUR-only sandbox) as currency_not_supported, nothing made", async () => {
    const eurOnly = await startMomoSimulator({
      targetEnvironment: 'sandbox',
      processingMs: TEST_PROCESSING_MS,
    });
    try {
      const sandboxRail = mtnMomoRail(configFor(eurOnly), { baseUrl: `${receiver.url}${callbackPath}` });
      const transfer = transferTo(NUMBER.succeed);
      expect(await sandboxRail.submit({ idempotencyReference: transfer.id, transfer }, new Date())).toEqual({
        accepted: false,
        failureCode: 'currency_not_supported',
      });
      expect(
        await sandboxRail.collect(collectionRequest('+46733123499', 5_000n, 'EUR'), new Date()),
      ).toMatchObject({ accepted: true });
      expect(eurOnly.resources('disbursement')).toHaveLength(0);
    } finally {
      await eurOnly.close();
    }
  });

  it('derives one UUID version 4 X-Reference-Id per idempotency reference and product', () => {
    const reference = momoReferenceId('tr_123', 'disbursement');
    expect(reference).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(momoReferenceId('tr_123', 'disbursement')).toBe(reference);
    expect(momoReferenceId('tr_124', 'disbursement')).not.toBe(reference);
    expect(momoReferenceId('tr_123', 'collection')).not.toBe(reference);
  });
});
