/**
 * The M-Pesa Daraja adapter against the Daraja simulator, over real HTTP both ways: the adapter calls the
 * simulator, and the simulator POSTs its results to a local receiver standing in for our callback
 * endpoint; what arrives there goes through parseCallback. No fetch is mocked.
 */

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transfer } from '../src/domain/transferRecord.ts';
import {
  DarajaAuthError,
  DarajaTimeoutError,
  DarajaUnavailableError,
  type MpesaDarajaConfig,
} from '../src/modules/railPartners/partners/mpesaDaraja/connection.ts';
import { DARAJA_CALLBACK_PATHS } from '../src/modules/railPartners/partners/mpesaDaraja/protocol.ts';
import { mpesaDarajaRail } from '../src/modules/railPartners/partners/mpesaDaraja/rail.ts';
import { guardedFetch } from '../src/outbound/guard.ts';
import {
  type ArrivedCallback,
  type CallbackReport,
  MalformedCallbackError,
  type PartnerRail,
} from '../src/rails/partner.ts';
import { SANDBOX_PHONE_BEHAVIOURS } from '../src/rails/sandbox.ts';
import {
  DARAJA_SIMULATOR_CERTIFICATE_PATH,
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  DARAJA_SIMULATOR_PHONE_BEHAVIOURS,
  DARAJA_STK_PROMPT_TIMEOUT_MS,
  type DarajaSimulator,
  startDarajaSimulator,
} from '../src/simulators/mpesaDaraja/index.ts';
import { mobileMoneyPayout } from './support/payouts.ts';

/** The delayed-settlement number's delay here (the sandbox's 10 s would slow the suite). */
const TEST_DELAYED_SETTLEMENT_MS = 300;
/** Late callbacks are held until the test delivers them. */
const TEST_LATE_CALLBACK_DELAY_MS = 60_000;
/** The adapter's request time-out in the hanging-API case. */
const TEST_REQUEST_TIMEOUT_MS = 300;
/** Slack for a timed-out call to come back after its time-out. */
const TIMEOUT_SLACK_MS = 1_000;
/** How long a test waits for a callback, and how often it looks. */
const CALLBACK_WAIT_MS = 3_000;
const POLL_MS = 10;
/** Long enough for a callback due now to have arrived, when checking that one did not. */
const QUIET_PERIOD_MS = 100;
const OAUTH_PATH = '/oauth/v1/generate';
/** The Transaction Status request's fields as Safaricom's page publishes them. */
const PUBLISHED_STATUS_QUERY_FIELDS = [
  'Initiator',
  'SecurityCredential',
  'CommandID',
  'TransactionID',
  'OriginalConversationID',
  'PartyA',
  'IdentifierType',
  'ResultURL',
  'QueueTimeOutURL',
  'Remarks',
  'Occasion',
];

const PHONE = {
  settle: '+254700000000',
  notRegistered: '+254700000001',
  insufficientFunds: '+254700000002',
  timeout: '+254700000003',
  delayed: '+254700000004',
  duplicateCallback: '+254700000010',
  lateCallback: '+254700000011',
  malformedCallback: '+254700000012',
  error500: '+254700000013',
  error503: '+254700000014',
  hang: '+254700000015',
  queueTimeout: '+254700000016',
  stkCancelled: '+254700000020',
  stkUnreachable: '+254700000021',
  stkExpired: '+254700000022',
} as const;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface CallbackReceiver {
  /** The organization's callback base URL, ending in its path token. */
  baseUrl: string;
  arrived: ArrivedCallback[];
  close(): Promise<void>;
}

/** Our callback endpoint: records what arrives under /callbacks/<token>/ and answers as Daraja expects. */
async function startCallbackReceiver(token: string): Promise<CallbackReceiver> {
  const prefix = `/callbacks/${token}/`;
  const arrived: ArrivedCallback[] = [];
  const server = http.createServer((request, response) => {
    let rawBody = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      rawBody += chunk;
    });
    request.on('end', () => {
      const url = request.url ?? '';
      if (!url.startsWith(prefix)) {
        response.writeHead(404).end();
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(request.headers).map(([name, value]) => [
          name,
          Array.isArray(value) ? value.join(', ') : value,
        ]),
      );
      arrived.push({ path: url.slice(prefix.length), headers, rawBody });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ ResultCode: 0, ResultDesc: 'Accepted' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/callbacks/${token}`,
    arrived,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let simulator: DarajaSimulator;
let receiver: CallbackReceiver;
let rail: PartnerRail;

function config(overrides: Partial<MpesaDarajaConfig> = {}): MpesaDarajaConfig {
  return {
    fetch: guardedFetch('allow_loopback'),
    baseUrl: simulator.url,
    requestTimeoutMs: CALLBACK_WAIT_MS,
    ...DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
    ...overrides,
  };
}

function newRail(overrides: Partial<MpesaDarajaConfig> = {}): PartnerRail {
  return mpesaDarajaRail(config(overrides), { baseUrl: receiver.baseUrl });
}

function payout(phone: string, overrides: Partial<Transfer> = {}): Transfer {
  return mobileMoneyPayout(phone, 'mpesa', {
    organizationId: 'org_daraja_test',
    sourceWalletId: 'wallet_daraja_test',
    ...overrides,
  });
}

function collection(phone: string, amountMinor = 250_00n) {
  return {
    idempotencyReference: `col_${randomUUID().replaceAll('-', '')}`,
    amountMinor,
    currency: 'KES' as const,
    payerPhone: phone,
    reference: 'INV-2041',
    description: 'Invoice 2041',
  };
}

/** Submits a payout and returns its transfer as the worker would then hold it (with its rail reference). */
async function submitted(phone: string, adapter = rail): Promise<Transfer> {
  const transfer = payout(phone);
  const result = await adapter.submit({ idempotencyReference: transfer.id, transfer }, new Date());
  if (!result.accepted) throw new Error(`payout to ${phone} refused: ${result.failureCode}`);
  return { ...transfer, railReference: result.reference };
}

/** The callbacks that arrived at `path` mentioning `id`, once there are at least `count`. */
async function callbacksFor(path: string, id: string, count = 1): Promise<ArrivedCallback[]> {
  const deadline = Date.now() + CALLBACK_WAIT_MS;
  for (;;) {
    const found = receiver.arrived.filter((c) => c.path === path && c.rawBody.includes(id));
    if (found.length >= count) return found;
    if (Date.now() > deadline) throw new Error(`no ${count} callback(s) at ${path} for ${id}`);
    await sleep(POLL_MS);
  }
}

async function reportFor(path: string, id: string): Promise<CallbackReport> {
  const [callback] = await callbacksFor(path, id);
  if (!callback) throw new Error('unreachable');
  return rail.parseCallback(callback);
}

/** Asks for a status query and returns what its result callback says. */
async function statusReport(transfer: Transfer): Promise<CallbackReport> {
  const before = receiver.arrived.length;
  const outcome = await rail.check(transfer, new Date());
  expect(outcome).toMatchObject({ kind: 'processing', reference: transfer.railReference });
  const deadline = Date.now() + CALLBACK_WAIT_MS;
  for (;;) {
    const callback = receiver.arrived
      .slice(before)
      .find((c) => c.path === DARAJA_CALLBACK_PATHS.statusResult && c.rawBody.includes(transfer.id));
    if (callback) return rail.parseCallback(callback);
    if (Date.now() > deadline) throw new Error(`no status result for ${transfer.id}`);
    await sleep(POLL_MS);
  }
}

const oauthRequests = () => simulator.requests.filter((r) => r.path === OAUTH_PATH).length;
const paymentsFor = (id: string) => simulator.payments.filter((p) => p.originatorConversationId === id);

beforeAll(async () => {
  simulator = await startDarajaSimulator({
    delayedSettlementMs: TEST_DELAYED_SETTLEMENT_MS,
    lateCallbackDelayMs: TEST_LATE_CALLBACK_DELAY_MS,
  });
  receiver = await startCallbackReceiver(`tok_${randomUUID().replaceAll('-', '')}`);
  rail = newRail();
});

afterAll(async () => {
  await simulator?.close();
  await receiver?.close();
});

describe('OAuth', () => {
  it('fetches one token for many calls and a new one after Daraja expires it', async () => {
    const adapter = newRail();
    const before = oauthRequests();
    for (let i = 0; i < 3; i++) await submitted(PHONE.settle, adapter);
    expect(oauthRequests() - before).toBe(1);

    simulator.expireTokens();
    const transfer = await submitted(PHONE.settle, adapter);
    expect(oauthRequests() - before).toBe(2);
    // The refused request was sent again with the new token, and paid once.
    const attempts = simulator.requests.filter(
      (r) => r.path === '/mpesa/b2c/v3/paymentrequest' && r.rawBody.includes(transfer.id),
    );
    expect(attempts).toHaveLength(2);
    expect(paymentsFor(transfer.id)).toHaveLength(1);
  });

  it('encrypts the initiator password with the configured certificate when given one', async () => {
    const certificate = await (await fetch(`${simulator.url}${DARAJA_SIMULATOR_CERTIFICATE_PATH}`)).text();
    const { initiatorPassword } = DARAJA_SIMULATOR_DEFAULT_CREDENTIALS;
    const encrypting = newRail({ securityCredential: undefined, initiatorPassword, certificate });
    const settled = await submitted(PHONE.settle, encrypting);
    expect(await reportFor(DARAJA_CALLBACK_PATHS.b2cResult, settled.id)).toMatchObject({
      outcome: { kind: 'settled' },
    });
    const sent = simulator.requests.find((r) => r.rawBody.includes(settled.id))?.body as Record<
      string,
      unknown
    >;
    expect(sent.SecurityCredential).not.toContain(initiatorPassword);

    const wrong = newRail({ securityCredential: undefined, initiatorPassword: 'not-it', certificate });
    const refused = await submitted(PHONE.settle, wrong);
    expect(await reportFor(DARAJA_CALLBACK_PATHS.b2cResult, refused.id)).toMatchObject({
      outcome: { kind: 'failed', failureCode: 'partner_configuration_error' },
    });

    const broken = newRail({ initiatorPassword, certificate: 'not a certificate' });
    const transfer = payout(PHONE.settle);
    await expect(broken.submit({ idempotencyReference: transfer.id, transfer }, new Date())).rejects.toThrow(
      DarajaAuthError,
    );
  });

  it('takes a new token when another client of the same app has replaced its own', async () => {
    const adapter = newRail();
    await submitted(PHONE.settle, adapter);
    const before = oauthRequests();
    await submitted(PHONE.settle, newRail()); // a new token for the app: the first adapter's is now invalid
    const transfer = await submitted(PHONE.settle, adapter);
    expect(oauthRequests() - before).toBe(2);
    expect(paymentsFor(transfer.id)).toHaveLength(1);
  });

  it('fails clearly with a wrong consumer secret, and asks for nothing else', async () => {
    const adapter = newRail({ consumerSecret: 'not-the-secret' });
    const before = simulator.requests.length;
    const transfer = payout(PHONE.settle);
    await expect(adapter.submit({ idempotencyReference: transfer.id, transfer }, new Date())).rejects.toThrow(
      DarajaAuthError,
    );
    await expect(adapter.submit({ idempotencyReference: transfer.id, transfer }, new Date())).rejects.toThrow(
      /refused the consumer key and secret \(HTTP 400/,
    );
    expect(simulator.requests.slice(before).every((r) => r.path === OAUTH_PATH)).toBe(true);
  });
});

describe('payouts (B2C)', () => {
  it('is accepted under its idempotency reference, and the result settles it with the receipt', async () => {
    const transfer = await submitted(PHONE.settle);
    expect(transfer.railReference).toBe(transfer.id);
    const [payment] = paymentsFor(transfer.id);
    expect(payment).toMatchObject({ partyB: '254700000000', amount: 1500 });

    const report = await reportFor(DARAJA_CALLBACK_PATHS.b2cResult, transfer.id);
    expect(report).toEqual({
      kind: 'payout',
      reference: transfer.id,
      idempotencyReference: transfer.id,
      outcome: { kind: 'settled', reference: transfer.id },
      partnerTransactionId: payment?.receipt,
      amountMinor: 1_500_00n,
    });
  });

  it("gives each sandbox magic number the sandbox's outcome and failure code", async () => {
    for (const [phone, behaviour] of Object.entries(SANDBOX_PHONE_BEHAVIOURS)) {
      expect(DARAJA_SIMULATOR_PHONE_BEHAVIOURS[phone], phone).toBeDefined();
      if (behaviour.kind !== 'fail' && behaviour.kind !== 'settle') continue;
      const transfer = await submitted(phone);
      const report = await reportFor(DARAJA_CALLBACK_PATHS.b2cResult, transfer.id);
      const expected =
        behaviour.kind === 'fail'
          ? { kind: 'failed', failureCode: behaviour.failureCode, reference: transfer.id }
          : { kind: 'settled', reference: transfer.id };
      expect(report, phone).toMatchObject({ kind: 'payout', reference: transfer.id, outcome: expected });
    }
  });

  it('settles the delayed number only after its delay, and says so to status queries meanwhile', async () => {
    const transfer = await submitted(PHONE.delayed);
    expect(await statusReport(transfer)).toEqual({ kind: 'ignored', reason: 'transaction_status_pending' });
    const report = await reportFor(DARAJA_CALLBACK_PATHS.b2cResult, transfer.id);
    expect(report).toMatchObject({ outcome: { kind: 'settled' } });
    expect(await statusReport(transfer)).toMatchObject({ outcome: { kind: 'settled' } });
  });

  it('never reports the time-out number, and status queries say it is still processing', async () => {
    const transfer = await submitted(PHONE.timeout);
    await simulator.idle();
    await sleep(QUIET_PERIOD_MS);
    expect(
      receiver.arrived.filter((c) => c.rawBody.includes(transfer.id) && c.path.startsWith('b2c')),
    ).toEqual([]);
    expect(await statusReport(transfer)).toEqual({ kind: 'ignored', reason: 'transaction_status_pending' });
  });

  it('pays once when submitted again: the same reference, one payment, one result', async () => {
    const transfer = payout(PHONE.settle);
    const request = { idempotencyReference: transfer.id, transfer };
    const first = await rail.submit(request, new Date());
    const again = await newRail().submit(request, new Date());
    expect(first).toMatchObject({ accepted: true, reference: transfer.id });
    expect(again).toMatchObject({ accepted: true, reference: transfer.id });
    expect(paymentsFor(transfer.id)).toHaveLength(1);
    await callbacksFor(DARAJA_CALLBACK_PATHS.b2cResult, transfer.id);
    await simulator.idle();
    expect(receiver.arrived.filter((c) => c.rawBody.includes(transfer.id))).toHaveLength(1);
  });

  it('throws on a 500 or 503 and pays nothing; a transient failure then succeeds on retry', async () => {
    for (const [phone, status] of [
      [PHONE.error500, 500],
      [PHONE.error503, 503],
    ] as const) {
      const transfer = payout(phone);
      const error = await rail
        .submit({ idempotencyReference: transfer.id, transfer }, new Date())
        .catch((e) => e);
      expect(error).toBeInstanceOf(DarajaUnavailableError);
      expect(error).toMatchObject({ status });
      expect(paymentsFor(transfer.id)).toEqual([]);
    }

    const transfer = payout(PHONE.settle);
    const request = { idempotencyReference: transfer.id, transfer };
    simulator.failNext(1, 503);
    await expect(rail.submit(request, new Date())).rejects.toThrow(DarajaUnavailableError);
    expect(await rail.submit(request, new Date())).toMatchObject({ accepted: true, reference: transfer.id });
    expect(paymentsFor(transfer.id)).toHaveLength(1);
  });

  it('throws within the time-out when Daraja never answers; the retry finds the payment already made', async () => {
    const transfer = payout(PHONE.hang);
    const request = { idempotencyReference: transfer.id, transfer };
    const started = Date.now();
    await expect(
      newRail({ requestTimeoutMs: TEST_REQUEST_TIMEOUT_MS }).submit(request, new Date()),
    ).rejects.toThrow(DarajaTimeoutError);
    expect(Date.now() - started).toBeLessThan(TEST_REQUEST_TIMEOUT_MS + TIMEOUT_SLACK_MS);

    // The unanswered request went through: the retry is told it is a duplicate, and pays nothing more.
    expect(await rail.submit(request, new Date())).toMatchObject({ accepted: true, reference: transfer.id });
    expect(paymentsFor(transfer.id)).toHaveLength(1);
    expect(await reportFor(DARAJA_CALLBACK_PATHS.b2cResult, transfer.id)).toMatchObject({
      outcome: { kind: 'settled' },
    });
  });

  it('reads a duplicate result callback as the identical report', async () => {
    const transfer = await submitted(PHONE.duplicateCallback);
    const [first, second] = await callbacksFor(DARAJA_CALLBACK_PATHS.b2cResult, transfer.id, 2);
    if (!first || !second) throw new Error('unreachable');
    expect(second.rawBody).toBe(first.rawBody);
    expect(rail.parseCallback(second)).toEqual(rail.parseCallback(first));
    expect(rail.parseCallback(first)).toMatchObject({ outcome: { kind: 'settled' } });
  });

  it('reads a late result callback whenever it comes; the status query already knew', async () => {
    const transfer = await submitted(PHONE.lateCallback);
    await simulator.idle();
    await sleep(QUIET_PERIOD_MS);
    expect(
      receiver.arrived.filter(
        (c) => c.path === DARAJA_CALLBACK_PATHS.b2cResult && c.rawBody.includes(transfer.id),
      ),
    ).toEqual([]);
    expect(await statusReport(transfer)).toMatchObject({ outcome: { kind: 'settled' } });

    await simulator.deliverPendingCallbacks();
    expect(await reportFor(DARAJA_CALLBACK_PATHS.b2cResult, transfer.id)).toMatchObject({
      reference: transfer.id,
      outcome: { kind: 'settled' },
    });
  });

  it('refuses a malformed result callback with MalformedCallbackError', async () => {
    const transfer = await submitted(PHONE.malformedCallback);
    const [callback] = await callbacksFor(DARAJA_CALLBACK_PATHS.b2cResult, transfer.id);
    if (!callback) throw new Error('unreachable');
    expect(() => rail.parseCallback(callback)).toThrow(MalformedCallbackError);
  });

  it("ignores Daraja's queue time-out notice; M-Pesa never saw the request", async () => {
    const transfer = await submitted(PHONE.queueTimeout);
    expect(await reportFor(DARAJA_CALLBACK_PATHS.b2cQueueTimeout, transfer.id)).toEqual({
      kind: 'ignored',
      reason: 'b2c_queue_timeout',
    });
    expect(await statusReport(transfer)).toEqual({ kind: 'ignored', reason: 'status_query_result_2033' });
  });

  it('checks a payout by a status query whose result callback settles it with the receipt', async () => {
    const transfer = await submitted(PHONE.settle);
    const [payment] = paymentsFor(transfer.id);
    expect(await statusReport(transfer)).toEqual({
      kind: 'payout',
      reference: transfer.id,
      idempotencyReference: transfer.id,
      outcome: { kind: 'settled', reference: transfer.id },
      partnerTransactionId: payment?.receipt,
      amountMinor: 1_500_00n,
    });
  });

  it('sends the status query in the published request shape, naming the payout OriginalConversationID', async () => {
    const transfer = await submitted(PHONE.settle);
    await statusReport(transfer);
    const query = simulator.requests.find(
      (r) => r.path === '/mpesa/transactionstatus/v1/query' && r.rawBody.includes(transfer.id),
    );
    const body = query?.body as Record<string, unknown>;
    expect(
      Object.keys(body).every((key) => PUBLISHED_STATUS_QUERY_FIELDS.includes(key)),
      query?.rawBody,
    ).toBe(true);
    expect(body).toMatchObject({
      Initiator: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.initiatorName,
      CommandID: 'TransactionStatusQuery',
      OriginalConversationID: transfer.id,
      PartyA: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.shortCode,
      IdentifierType: '4',
    });
    expect(body).not.toHaveProperty('OriginatorConversationID');
  });

  it('refuses amounts M-Pesa cannot move without asking Daraja', async () => {
    const before = simulator.requests.length;
    for (const transfer of [
      payout(PHONE.settle, { currency: 'USD' }),
      payout(PHONE.settle, { amountMinor: 1_500_50n }),
    ]) {
      expect(await rail.submit({ idempotencyReference: transfer.id, transfer }, new Date())).toEqual({
        accepted: false,
        failureCode: 'amount_not_supported',
      });
    }
    expect(await rail.collect({ ...collection('+254711000001'), currency: 'UGX' }, new Date())).toEqual({
      accepted: false,
      failureCode: 'amount_not_supported',
    });
    expect(simulator.requests.length).toBe(before);
  });
});

describe('collections (M-Pesa Express)', () => {
  it('pushes a prompt; the callback settles it with the receipt, and the query agrees', async () => {
    const request = collection('+254711000002');
    const result = await rail.collect(request, new Date());
    if (!result.accepted) throw new Error(`refused: ${result.failureCode}`);
    const push = simulator.pushes.find((p) => p.checkoutRequestId === result.reference);
    expect(push).toMatchObject({ phoneNumber: '254711000002', amount: 250, accountReference: 'INV-2041' });

    expect(await reportFor(DARAJA_CALLBACK_PATHS.stk, result.reference)).toEqual({
      kind: 'collection',
      reference: result.reference,
      outcome: { kind: 'settled', reference: result.reference },
      partnerTransactionId: push?.receipt,
      amountMinor: 250_00n,
    });
    expect(await rail.checkCollection(result.reference, request.idempotencyReference, new Date())).toEqual({
      kind: 'settled',
      reference: result.reference,
    });
  });

  it('reports a cancelled prompt, an unreachable phone and an empty wallet as failures', async () => {
    for (const [phone, failureCode] of [
      [PHONE.stkCancelled, 'payer_cancelled'],
      [PHONE.stkUnreachable, 'payer_unreachable'],
      [PHONE.insufficientFunds, 'insufficient_funds'],
    ] as const) {
      const request = collection(phone);
      const result = await rail.collect(request, new Date());
      if (!result.accepted) throw new Error(`refused: ${result.failureCode}`);
      const failed = { kind: 'failed', failureCode, reference: result.reference };
      expect(await reportFor(DARAJA_CALLBACK_PATHS.stk, result.reference), phone).toMatchObject({
        kind: 'collection',
        outcome: failed,
      });
      expect(await rail.checkCollection(result.reference, request.idempotencyReference, new Date())).toEqual(
        failed,
      );
    }
  });

  it('is refused for a number M-Pesa does not know', async () => {
    expect(await rail.collect(collection(PHONE.notRegistered), new Date())).toEqual({
      accepted: false,
      failureCode: 'invalid_phone',
    });
  });

  it('answers a repeated collect with the first push, and never prompts a phone twice at once', async () => {
    const request = collection(PHONE.timeout);
    const first = await rail.collect(request, new Date());
    const again = await rail.collect(request, new Date());
    expect(first).toMatchObject({ accepted: true });
    expect(again).toEqual(first);
    if (!first.accepted) throw new Error('unreachable');
    expect(
      await rail.checkCollection(first.reference, request.idempotencyReference, new Date()),
    ).toMatchObject({
      kind: 'processing',
      reference: first.reference,
    });

    // Another process (or this one restarted) knows nothing of the first push; M-Pesa's lock on the
    // payer's phone refuses the second prompt, and the collect is refused rather than retried into one.
    expect(await newRail().collect(request, new Date())).toEqual({
      accepted: false,
      failureCode: 'payer_busy',
    });
    expect(simulator.pushes.filter((p) => p.phoneNumber === PHONE.timeout.slice(1))).toHaveLength(1);
  });
});

describe('collections whose prompt times out', () => {
  it('reads the query after the prompt time-out as payer_unreachable (1037) or collection_expired (1019)', async () => {
    let now = Date.now();
    const clocked = await startDarajaSimulator({ now: () => new Date(now) });
    try {
      const adapter = mpesaDarajaRail(config({ baseUrl: clocked.url }), { baseUrl: receiver.baseUrl });
      const unanswered = await adapter.collect(collection(PHONE.timeout), new Date(now));
      const expiring = await adapter.collect(collection(PHONE.stkExpired), new Date(now));
      if (!unanswered.accepted || !expiring.accepted) throw new Error('refused');
      expect(await adapter.checkCollection(unanswered.reference, 'x', new Date(now))).toMatchObject({
        kind: 'processing',
      });
      now += DARAJA_STK_PROMPT_TIMEOUT_MS;
      expect(await adapter.checkCollection(unanswered.reference, 'x', new Date(now))).toEqual({
        kind: 'failed',
        failureCode: 'payer_unreachable',
        reference: unanswered.reference,
      });
      expect(await adapter.checkCollection(expiring.reference, 'x', new Date(now))).toEqual({
        kind: 'failed',
        failureCode: 'collection_expired',
        reference: expiring.reference,
      });
    } finally {
      await clocked.close();
    }
  });
});

describe('parseCallback', () => {
  const arrived = (path: string, body: unknown): ArrivedCallback => ({
    path,
    headers: { 'content-type': 'application/json' },
    rawBody: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const b2cResult = (code: number | string) => ({
    Result: {
      ResultType: 0,
      ResultCode: code,
      ResultDesc: 'a description',
      OriginatorConversationID: 'tr_1',
      ConversationID: 'AG_20260101_00001',
      TransactionID: 'NLJ0000000',
    },
  });

  it('maps result codes by the table, keeps unknown ones as partner_rejected, ignores a duplicate notice', () => {
    const outcome = (code: number | string) =>
      rail.parseCallback(arrived(DARAJA_CALLBACK_PATHS.b2cResult, b2cResult(code)));
    expect(outcome('SFC_IC0003')).toMatchObject({
      outcome: { kind: 'failed', failureCode: 'recipient_not_registered' },
    });
    expect(outcome(2001)).toMatchObject({
      outcome: { kind: 'failed', failureCode: 'partner_configuration_error' },
    });
    expect(outcome(9999)).toMatchObject({ outcome: { kind: 'failed', failureCode: 'partner_rejected' } });
    expect(outcome(15)).toEqual({ kind: 'ignored', reason: 'duplicate_originator_conversation_id' });
  });

  it('throws MalformedCallbackError for anything not in Daraja’s shape', () => {
    const malformed = [
      arrived(DARAJA_CALLBACK_PATHS.b2cResult, '{"Result":'),
      arrived(DARAJA_CALLBACK_PATHS.b2cResult, { Result: { ResultCode: 0 } }),
      arrived(DARAJA_CALLBACK_PATHS.b2cResult, b2cResult(0)), // success without parameters
      arrived(DARAJA_CALLBACK_PATHS.stk, {
        Body: { stkCallback: { CheckoutRequestID: 'ws_CO_1', ResultCode: 0 } },
      }),
      arrived(DARAJA_CALLBACK_PATHS.statusResult, { Result: { ResultDesc: 'no code' } }),
      arrived('somewhere/else', b2cResult(0)),
    ];
    for (const callback of malformed) {
      expect(() => rail.parseCallback(callback), callback.rawBody).toThrow(MalformedCallbackError);
    }
  });
});
