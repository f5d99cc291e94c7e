/**
 * What the call log keeps of a request, pure: paths lose their query and anything that could be a phone or
 * account number or an e-mail; only values in a reference's form are kept; the operation follows the path
 * and the adapter method; the subject is read from the method's arguments by id prefix.
 */
import { describe, expect, it } from 'vitest';
import {
  maskedCallPath,
  PARTNER_CALL_DESCRIBERS,
  referenceOf,
} from '../src/modules/railPartners/partners/callDescriptions.ts';
import { subjectOf } from '../src/modules/railPartners/useCases/partnerCalls.ts';

const request = (method: string, path: string, extra: object = {}) => ({
  method,
  path,
  headers: {},
  body: undefined,
  subject: {},
  ...extra,
});

describe('rail partner call descriptions', () => {
  it('masks phone numbers, account numbers and e-mails in a path and drops its query', () => {
    expect(maskedCallPath('/disbursement/v1_0/accountholder/msisdn/256772123456/active')).toBe(
      '/disbursement/v1_0/accountholder/msisdn/2567••••••56/active',
    );
    expect(maskedCallPath('/collection/v1_0/accountholder/email/a%40b.example/active')).not.toContain('a@b');
    expect(maskedCallPath('/v3/transfers?reference=tr_1')).toBe('/v3/transfers');
  });

  it('keeps only values in the form of a reference or code', () => {
    expect(referenceOf('tr_01abc')).toBe('tr_01abc');
    expect(referenceOf(12345)).toBe('12345');
    expect(referenceOf('Pastor Bright')).toBeNull();
    expect(referenceOf('eyJhbGciOi.x.y z')).toBeNull();
    expect(referenceOf({ id: 'x' })).toBeNull();
  });

  it('names Daraja’s Transaction Status by what it asks about', () => {
    const daraja = PARTNER_CALL_DESCRIBERS.mpesa_daraja;
    const status = (adapterMethod: string) =>
      daraja?.request(request('POST', '/mpesa/transactionstatus/v1/query', { subject: { adapterMethod } }))
        .operation;
    expect(status('check')).toBe('payout_status');
    expect(status('checkReversal')).toBe('reversal_status');
    expect(status('verifyCredit')).toBe('transaction_verify');
  });

  it('tells Fireblocks’ sweeps from payouts by the subject', () => {
    const fireblocks = PARTNER_CALL_DESCRIBERS.fireblocks;
    const body = { externalTxId: 'csw_1' };
    expect(
      fireblocks?.request(request('POST', '/transactions', { body, subject: { sweepId: 'csw_1' } })),
    ).toEqual({ operation: 'sweep_submit', ourReference: 'csw_1' });
    expect(fireblocks?.request(request('GET', '/transactions?after=1'))).toEqual({
      operation: 'deposit_poll',
      ourReference: null,
    });
  });

  it('reads the subject from the adapter method’s arguments, a transfer before its wallet', () => {
    expect(
      subjectOf('submit', [{ idempotencyReference: 'tr_1', transfer: { id: 'tr_1', walletId: 'wallet_1' } }]),
    ).toEqual({
      adapterMethod: 'submit',
      transferId: 'tr_1',
    });
    expect(subjectOf('depositAddress', ['wallet_2', 'USDC', 'ethereum'])).toEqual({
      adapterMethod: 'depositAddress',
      walletId: 'wallet_2',
    });
    expect(subjectOf('collect', [{ idempotencyReference: 'col_3', payerPhone: '+254700000000' }])).toEqual({
      adapterMethod: 'collect',
      collectionId: 'col_3',
    });
  });
});
