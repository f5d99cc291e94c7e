/**
 * The Daraja simulator's C2B requests refused and acknowledged as Daraja's published pages say (Register URL,
 * v1 and v2, and the sandbox's simulate), sent as any client sends them; docs/rails/mpesa-daraja.md's C2B
 * rows. The payments they start, end to end through the service, are test/rails-mpesa-daraja-c2b.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DarajaSimulator, startDarajaSimulator } from '../src/simulators/mpesaDaraja/index.ts';
import { darajaPost } from './support/daraja.ts';

describe('the simulator refuses C2B requests as Daraja does', () => {
  let sim: DarajaSimulator;
  beforeAll(async () => {
    sim = await startDarajaSimulator();
  });
  afterAll(async () => {
    await sim?.close();
  });

  const register = {
    ShortCode: '600984',
    ResponseType: 'Completed',
    ConfirmationURL: 'https://example.com/confirm',
    ValidationURL: 'https://example.com/validate',
  };
  const simulate = {
    ShortCode: 600984,
    CommandID: 'CustomerPayBillOnline',
    Amount: 1,
    Msisdn: 254708374149,
    BillRefNumber: 'account',
  };

  it.each([
    ['ShortCode', { ShortCode: undefined }],
    ['ShortCode', { ShortCode: 'abc' }],
    ['ResponseType', { ResponseType: 'completed' }],
    ['ResponseType', { ResponseType: undefined }],
    ['ConfirmationURL', { ConfirmationURL: 'not a url' }],
    ['ValidationURL', { ValidationURL: undefined }],
  ])('register URL: a bad %s → 400.003.02', async (field, change) => {
    for (const path of ['/mpesa/c2b/v1/registerurl', '/mpesa/c2b/v2/registerurl']) {
      const answer = await darajaPost(sim, path, { ...register, ...change });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({
        errorCode: '400.003.02',
        errorMessage: `Bad Request - Invalid ${field}`,
      });
    }
  });

  it('register URL and simulate acknowledge with Daraja’s spelling', async () => {
    const registered = await darajaPost(sim, '/mpesa/c2b/v1/registerurl', register);
    expect(registered.status).toBe(200);
    expect(registered.body).toEqual({
      OriginatorCoversationID: expect.any(String),
      ResponseCode: '0',
      ResponseDescription: 'Success',
    });
    const simulated = await darajaPost(sim, '/mpesa/c2b/v1/simulate', simulate);
    expect(simulated.status).toBe(200);
    expect(simulated.body).toMatchObject({ ResponseCode: '0', OriginatorCoversationID: expect.any(String) });
    await sim.idle();
    expect(sim.c2bPayments.at(-1)).toMatchObject({ shortCode: '600984', amount: 1, status: 'completed' });
  });

  it.each([
    ['CommandID', { CommandID: 'CustomerPayBill' }],
    ['Amount', { Amount: '1.50' }],
    ['Amount', { Amount: 0 }],
    ['Msisdn', { Msisdn: '0708374149' }],
    ['ShortCode', { ShortCode: 'x' }],
    ['BillRefNumber', { BillRefNumber: undefined }],
    ['BillRefNumber', { BillRefNumber: 'x'.repeat(21) }],
  ])('simulate: a bad %s → 400.003.02', async (field, change) => {
    const answer = await darajaPost(sim, '/mpesa/c2b/v1/simulate', { ...simulate, ...change });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ errorMessage: `Bad Request - Invalid ${field}` });
  });

  it('simulate: a buy goods payment needs no BillRefNumber', async () => {
    const answer = await darajaPost(sim, '/mpesa/c2b/v2/simulate', {
      ...simulate,
      CommandID: 'CustomerBuyGoodsOnline',
      BillRefNumber: undefined,
    });
    expect(answer.status).toBe(200);
  });
});
