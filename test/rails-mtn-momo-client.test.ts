/**
 * A MoMo client nobody here wrote (the npm registry's `mtn-momo`, pinned as a dev dependency) against the MoMo
 * simulator, unmodified, with nothing changed but its base URL: sandbox provisioning, tokens, request-to-pay,
 * transfers, their status and the balances, as it would run against MTN's sandbox.
 */

import * as momo from 'mtn-momo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MomoSimulator, startMomoSimulator } from '../src/simulators/mtnMomo/index.ts';

let sim: MomoSimulator;

beforeAll(async () => {
  sim = await startMomoSimulator({ targetEnvironment: 'sandbox', processingMs: 10 });
});

afterAll(async () => {
  await sim?.close();
});

/** The client as its README sets it up for MTN's sandbox, but for the base URL. */
function client() {
  return momo.create({ callbackHost: 'localhost', baseUrl: sim.url, environment: momo.Environment.SANDBOX });
}

/** A sandbox API user made with the client's own provisioning calls, and its key. */
async function provisioned(primaryKey: string) {
  const users = client().Users({ primaryKey });
  const userId = await users.create('localhost');
  const { apiKey } = await users.login(userId);
  return { userId, userSecret: apiKey, primaryKey };
}

/** A party and the notes, as the client's README writes a request's. */
const party = (partyId: string) => ({ partyIdType: momo.PayerType.MSISDN, partyId });
const notes = { payerMessage: 'testing', payeeNote: 'hello' };

describe('mtn-momo (npm) against the simulator', () => {
  it('provisions a user, collects, reads the request and the collection balance', async () => {
    const collections = client().Collections(await provisioned(sim.credentials.collectionSubscriptionKey));
    const paid = await collections.requestToPay({
      amount: '50',
      currency: 'EUR',
      externalId: '123456',
      payer: party('46733123499'),
      ...notes,
    });
    const declined = await collections.requestToPay({
      amount: '50',
      currency: 'EUR',
      externalId: '123457',
      payer: party('46733123451'),
      ...notes,
    });
    await sim.whenIdle();
    expect(await collections.getTransaction(paid)).toMatchObject({
      status: momo.Status.SUCCESSFUL,
      externalId: '123456',
      financialTransactionId: expect.any(String),
    });
    await expect(collections.getTransaction(declined)).rejects.toBeInstanceOf(momo.ApprovalRejectedError);
    expect(await collections.getBalance()).toEqual({ availableBalance: '1000000', currency: 'EUR' });
    // Its account-holder check sends the id type in capitals (`MSISDN`), which the simulator takes.
    expect(await collections.isPayerActive('46733123499')).toEqual({ result: true });
    expect(await collections.isPayerActive('46733123451')).toEqual({ result: false });
  });

  it('transfers, reads the transfer and the disbursement balance', async () => {
    const disbursements = client().Disbursements(
      await provisioned(sim.credentials.disbursementSubscriptionKey),
    );
    const sent = await disbursements.transfer({
      amount: '100',
      currency: 'EUR',
      externalId: '947354',
      payee: party('46733123499'),
      ...notes,
    });
    const short = await disbursements.transfer({
      amount: '100',
      currency: 'EUR',
      externalId: '947355',
      payee: party('46733123455'),
      ...notes,
    });
    await sim.whenIdle();
    expect(await disbursements.getTransaction(sent)).toMatchObject({ status: momo.Status.SUCCESSFUL });
    await expect(disbursements.getTransaction(short)).rejects.toBeInstanceOf(momo.NotEnoughFundsError);
    expect(await disbursements.getBalance()).toEqual({ availableBalance: '1000000', currency: 'EUR' });
  });
});
