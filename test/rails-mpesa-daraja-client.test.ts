/**
 * A Daraja client nobody here wrote (the npm registry's `mpesa-api`, pinned as a dev dependency) against the
 * Daraja simulator, unmodified: OAuth, B2C, M-Pesa Express (STK push and query), Transaction Status, Account
 * Balance, Reversal and C2B (Register URL, simulate), every operation the client has, with results arriving at
 * a local receiver in the published shapes.
 *
 * How the client reaches the simulator without a change to its code: it takes no base URL (only
 * `'sandbox' | 'production'`, i.e. https://sandbox.safaricom.co.ke or https://api.safaricom.co.ke) and sends
 * every request with Node's `https.request({ hostname, path })`, no port and no agent, so through
 * `https.globalAgent` on its default port. For this file's process the test does what a hosts-file entry and a
 * trusted test CA would do for a machine: the global agent resolves `sandbox.safaricom.co.ke` (only that name)
 * to 127.0.0.1 (`options.lookup`), connects to the simulator's port when a request names none
 * (`defaultPort`) and trusts the simulator's TLS certificate, whose names include Safaricom's hosts
 * (`options.ca`; src/simulators/mpesaDaraja/tls.ts). TLS is verified as usual, against that host name. The
 * agent is restored afterwards.
 */

import dns from 'node:dns';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Mpesa } from 'mpesa-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DARAJA_SANDBOX_HOST,
  DARAJA_SIMULATOR_CERTIFICATE_PATH,
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  DARAJA_SIMULATOR_TLS_CERTIFICATE_PEM,
  type DarajaSimulator,
  startDarajaSimulator,
} from '../src/simulators/mpesaDaraja/index.ts';
import { eventually } from './support/eventually.ts';
import { type Receiver, startReceiver } from './support/receiver.ts';

const CREDENTIALS = DARAJA_SIMULATOR_DEFAULT_CREDENTIALS;
/** A payee and payer number the simulator completes (no magic behaviour). */
const PHONE = '254708374149';
const LOOPBACK = '127.0.0.1';
/** The client types shortcodes and the C2B MSISDN as numbers (JSON numbers on the wire; Daraja takes both). */
const STK_SHORT_CODE = Number(CREDENTIALS.stkShortCode);
const C2B_SHORT_CODE = 600984;

let simulator: DarajaSimulator;
let receiver: Receiver;
let certificateDir: string;
let client: Mpesa;
/** The agent the client's requests go through; `defaultPort` is the port a request naming none connects to. */
const agent = https.globalAgent as https.Agent & { defaultPort: number };
const saved = { ca: agent.options.ca, lookup: agent.options.lookup, defaultPort: agent.defaultPort };

/** `sandbox.safaricom.co.ke` is the simulator on this machine; every other name resolves as usual. */
const sandboxHostToLoopback = ((hostname, options, callback) => {
  if (hostname !== DARAJA_SANDBOX_HOST) return dns.lookup(hostname, options, callback);
  if (options.all) return callback(null, [{ address: LOOPBACK, family: 4 }]);
  return callback(null, LOOPBACK, 4);
}) as LookupFunction;

/** GETs a URL through the redirected global agent, as the client's requests go. */
function httpsGet(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    https
      .get(url, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      })
      .on('error', reject);
  });
}

/** The callback body POSTed to `route` on the receiver whose text mentions `id`. */
async function callbackTo(route: string, id: string): Promise<Record<string, unknown>> {
  const found = await eventually(
    async () => receiver.received.find((r) => r.path.endsWith(route) && r.body.includes(id)),
    (r) => r !== undefined,
  );
  expect(found, `a callback to ${route} mentioning ${id}`).toBeDefined();
  return JSON.parse(found?.body ?? '{}') as Record<string, unknown>;
}

/** The `Result` of the result callback POSTed to `route` that mentions `id`. */
async function resultAt(route: string, id: string): Promise<Record<string, unknown>> {
  return (await callbackTo(route, id)).Result as Record<string, unknown>;
}

/** A result's ResultParameter list as a record. */
function parameters(result: Record<string, unknown>): Record<string, unknown> {
  const list = (result.ResultParameters as { ResultParameter: { Key: string; Value: unknown }[] })
    .ResultParameter;
  return Object.fromEntries(list.map((p) => [p.Key, p.Value]));
}

beforeAll(async () => {
  simulator = await startDarajaSimulator({ tls: true });
  receiver = await startReceiver();
  agent.options.ca = [DARAJA_SIMULATOR_TLS_CERTIFICATE_PEM];
  agent.options.lookup = sandboxHostToLoopback;
  agent.defaultPort = Number(new URL(simulator.url).port);
  // The client encrypts the initiator password itself with the certificate file it is given (its public
  // `certificatePath` option): here the one the simulator publishes, fetched from "Safaricom".
  const published = await httpsGet(`https://${DARAJA_SANDBOX_HOST}${DARAJA_SIMULATOR_CERTIFICATE_PATH}`);
  expect(published.status).toBe(200);
  certificateDir = await mkdtemp(path.join(os.tmpdir(), 'daraja-client-'));
  const certificatePath = path.join(certificateDir, 'sandbox.cer');
  await writeFile(certificatePath, published.text);
  client = new Mpesa(
    {
      clientKey: CREDENTIALS.consumerKey,
      clientSecret: CREDENTIALS.consumerSecret,
      initiatorPassword: CREDENTIALS.initiatorPassword,
      certificatePath,
    },
    'sandbox',
  );
  // The constructor starts that encryption without awaiting it; wait for it so no request can race it.
  // (Read only: the client's `securityCredential` is private in its types, not in its JavaScript.)
  const credential = await eventually(
    async () => (client as unknown as { securityCredential?: string }).securityCredential,
    (value) => value !== undefined,
  );
  expect(credential).toEqual(expect.any(String));
});

afterAll(async () => {
  agent.options.ca = saved.ca;
  agent.options.lookup = saved.lookup;
  agent.defaultPort = saved.defaultPort;
  await simulator?.close();
  await receiver?.close();
  if (certificateDir) await rm(certificateDir, { recursive: true, force: true });
});

describe('mpesa-api (npm) against the simulator', () => {
  it('pays out by B2C, then finds it by Transaction Status and reverses it', async () => {
    const accepted = await client.b2c({
      Initiator: CREDENTIALS.initiatorName,
      CommandID: 'BusinessPayment',
      Amount: 120,
      PartyA: CREDENTIALS.shortCode,
      PartyB: PHONE,
      Remarks: 'Client test payout',
      QueueTimeOutURL: `${receiver.url}/b2c/timeout`,
      ResultURL: `${receiver.url}/b2c/result`,
    });
    expect(accepted).toMatchObject({ ResponseCode: '0', ConversationID: expect.any(String) });
    const originator = String(accepted.OriginatorConversationID);
    const payout = await resultAt('/b2c/result', originator);
    expect(payout).toMatchObject({ ResultType: 0, ResultCode: 0, OriginatorConversationID: originator });
    const receipt = String(payout.TransactionID);
    expect(parameters(payout)).toMatchObject({ TransactionAmount: 120, TransactionReceipt: receipt });

    const status = await client.transactionStatus({
      Initiator: CREDENTIALS.initiatorName,
      CommandID: 'TransactionStatusQuery',
      TransactionID: receipt,
      PartyA: CREDENTIALS.shortCode,
      IdentifierType: '4',
      ResultURL: `${receiver.url}/status/result`,
      QueueTimeOutURL: `${receiver.url}/status/timeout`,
      Remarks: 'Client test status',
    });
    expect(status).toMatchObject({ ResponseCode: '0' });
    const found = await resultAt('/status/result', String(status.ConversationID));
    expect(found).toMatchObject({ ResultCode: 0, TransactionID: receipt });
    expect(parameters(found)).toMatchObject({
      ReceiptNo: receipt,
      TransactionStatus: 'Completed',
      Amount: 120,
    });

    const reversal = await client.reversal({
      Initiator: CREDENTIALS.initiatorName,
      CommandID: 'TransactionReversal',
      TransactionID: receipt,
      Amount: 120,
      ReceiverParty: CREDENTIALS.shortCode,
      // The published page asks for '11'; the client's types allow only '1' | '2' | '4' (its default is '4'),
      // so the value is cast for the compiler. The client sends what it is given.
      RecieverIdentifierType: '11' as unknown as '4',
      ResultURL: `${receiver.url}/reversal/result`,
      QueueTimeOutURL: `${receiver.url}/reversal/timeout`,
      Remarks: 'Client test reversal',
    });
    expect(reversal).toMatchObject({ ResponseCode: '0' });
    const reversed = await resultAt('/reversal/result', String(reversal.ConversationID));
    expect(reversed).toMatchObject({ ResultCode: 0 });
    expect(parameters(reversed)).toMatchObject({ OriginalTransactionID: receipt, Amount: 120 });
  });

  it('sends an STK push, whose result arrives and whose query answers it', async () => {
    const push = {
      BusinessShortCode: STK_SHORT_CODE,
      passKey: CREDENTIALS.passkey,
      // The client's default, 'CustomerPayBillOnline ' (trailing space), is not a TransactionType Daraja knows.
      TransactionType: 'CustomerPayBillOnline' as const,
      Amount: 15,
      PartyA: PHONE,
      PartyB: CREDENTIALS.stkShortCode,
      PhoneNumber: PHONE,
      CallBackURL: `${receiver.url}/stk`,
      AccountReference: 'INV-1',
      TransactionDesc: 'Client test',
    };
    const accepted = await client.lipaNaMpesaOnline(push);
    expect(accepted).toMatchObject({ ResponseCode: '0', CheckoutRequestID: expect.any(String) });
    const checkout = String(accepted.CheckoutRequestID);
    const callback = (await callbackTo('/stk', checkout)) as {
      Body: { stkCallback: Record<string, unknown> };
    };
    expect(callback.Body.stkCallback).toMatchObject({
      CheckoutRequestID: checkout,
      MerchantRequestID: accepted.MerchantRequestID,
      ResultCode: 0,
    });
    const query = await client.lipaNaMpesaQuery({
      BusinessShortCode: STK_SHORT_CODE,
      passKey: CREDENTIALS.passkey,
      CheckoutRequestID: checkout,
    });
    expect(query).toMatchObject({ ResponseCode: '0', CheckoutRequestID: checkout, ResultCode: '0' });
  });

  it('passes on Daraja’s error body as the client reports failures', async () => {
    const refused = client.lipaNaMpesaQuery({
      BusinessShortCode: STK_SHORT_CODE,
      passKey: 'not-the-passkey',
      CheckoutRequestID: 'ws_CO_000000000000000000000',
    });
    await expect(refused).rejects.toMatchObject({
      statusCode: 500,
      data: { errorCode: '500.001.1001', errorMessage: 'Wrong credentials' },
    });
  });

  it('asks for the account balance and gets the published result', async () => {
    const accepted = await client.accountBalance({
      Initiator: CREDENTIALS.initiatorName,
      CommandID: 'AccountBalance',
      PartyA: CREDENTIALS.shortCode,
      IdentifierType: '4',
      Remarks: 'Client test balance',
      QueueTimeOutURL: `${receiver.url}/balance/timeout`,
      ResultURL: `${receiver.url}/balance/result`,
    });
    expect(accepted).toMatchObject({ ResponseCode: '0' });
    const balance = await resultAt('/balance/result', String(accepted.ConversationID));
    expect(balance).toMatchObject({ ResultCode: 0 });
    expect(String(parameters(balance).AccountBalance)).toMatch(/Utility Account\|KES\|/);
  });

  it('registers C2B URLs and simulates a customer payment to them', async () => {
    const registered = await client.c2bRegister({
      ShortCode: C2B_SHORT_CODE,
      ResponseType: 'Completed',
      ConfirmationURL: `${receiver.url}/c2b/confirmation`,
      ValidationURL: `${receiver.url}/c2b/validation`,
    });
    expect(registered).toMatchObject({ ResponseCode: '0' });
    const simulated = await client.c2bSimulate({
      ShortCode: C2B_SHORT_CODE,
      CommandID: 'CustomerPayBillOnline',
      Amount: 25,
      Msisdn: Number(PHONE),
      BillRefNumber: 'ACC-7',
    });
    expect(simulated).toMatchObject({ ResponseCode: '0' });
    const confirmation = await callbackTo('/c2b/confirmation', 'ACC-7');
    expect(confirmation).toMatchObject({
      TransactionType: 'Pay Bill',
      BusinessShortCode: String(C2B_SHORT_CODE),
      BillRefNumber: 'ACC-7',
      TransAmount: '25.00',
    });
  });

  it('reached only the simulator, by Safaricom’s host name, over TLS', () => {
    const oauth = simulator.requests.filter((r) => r.path === '/oauth/v1/generate');
    expect(oauth.length).toBeGreaterThan(0);
    for (const request of simulator.requests) {
      expect(request.headers.host).toBe(DARAJA_SANDBOX_HOST);
    }
  });
});
