/**
 * Digital accounts, pure: the account number's check digit (ISO/IEC 7064 MOD 11-2 through @konfirm/iso7064,
 * against published examples and the standard's recursion written out here), the errors it catches, the
 * period and instant rules of statements and balances, and a statement's arithmetic.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseInstant } from '../src/domain/days.ts';
import { AppError } from '../src/domain/errors.ts';
import { balanceInstant } from '../src/domain/wallets.ts';
import {
  ACCOUNT_NUMBER_DIGITS,
  accountNumberCheckCharacter,
  accountNumberFromRandom,
  buildStatement,
  describeMovement,
  isValidAccountNumber,
  normaliseAccountNumber,
  STATEMENT_PERIOD_DAYS_MAX,
  type StatementMovement,
  statementPeriod,
} from '../src/modules/digitalAccounts/domain.ts';

/** ISO/IEC 7064 MOD 11-2 as the standard states it (the pure system's recursion), independent of the library. */
function referenceCheckCharacter(body: string): string {
  let product = 0;
  for (const digit of body) product = ((product + Number(digit)) * 2) % 11;
  const check = (12 - product) % 11;
  return check === 10 ? 'X' : String(check);
}

const NOW = new Date('2026-11-26T12:00:00.000Z');

function faultOf(fn: () => unknown): { status: number; param: string | undefined; code: string } {
  try {
    fn();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { status: error.status, param: error.param, code: error.errors[0]?.code ?? error.code };
  }
  throw new Error('expected an AppError');
}

const movement = (id: string, netMinor: bigint): StatementMovement => ({
  entryId: id,
  kind: 'direct',
  createdAt: NOW,
  netMinor,
  feeMinor: 0n,
  transferId: null,
  rail: null,
  railReference: null,
  counterparty: null,
  description: 'Credit',
});

describe('account numbers', () => {
  it('computes the MOD 11-2 check character of published examples', () => {
    // ORCID iDs carry an ISO 7064 MOD 11-2 check character: 0000-0002-1825-0097, 0000-0001-5109-3700 and
    // 0000-0002-1694-233X are the examples of ORCID's documentation; 079 → X is the library's own.
    expect(accountNumberCheckCharacter('000000021825009')).toBe('7');
    expect(accountNumberCheckCharacter('000000015109370')).toBe('0');
    expect(accountNumberCheckCharacter('000000021694233')).toBe('X');
    expect(accountNumberCheckCharacter('079')).toBe('X');
  });

  it('agrees with the standard’s recursion on any body', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{1,20}$/), (body) => {
        expect(accountNumberCheckCharacter(body)).toBe(referenceCheckCharacter(body));
      }),
    );
  });

  it('never issues a number whose check would be X', () => {
    // 10000000000's check is X: the last body digit moves on to 1, whose check is 8.
    expect(accountNumberCheckCharacter('10000000000')).toBe('X');
    expect(accountNumberFromRandom(new Uint8Array(11))).toBe('100000000018');
    for (let last = 0; last < 10; last++) {
      const bytes = new Uint8Array(11);
      bytes[10] = last;
      const number = accountNumberFromRandom(bytes);
      expect(number).toMatch(/^[1-9][0-9]{11}$/);
      expect(isValidAccountNumber(number)).toBe(true);
    }
  });

  it('draws 12 digits without a leading zero, valid, from random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 11, maxLength: 11 }), (bytes) => {
        const number = accountNumberFromRandom(bytes);
        expect(number).toMatch(/^[1-9][0-9]{11}$/);
        expect(number).toHaveLength(ACCOUNT_NUMBER_DIGITS);
        expect(isValidAccountNumber(number)).toBe(true);
      }),
    );
    expect(() => accountNumberFromRandom(new Uint8Array(10))).toThrow();
  });

  it('catches every single wrong digit and every swap of two adjacent different digits', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 11, maxLength: 11 }), (bytes) => {
        const number = accountNumberFromRandom(bytes);
        for (let i = 0; i < number.length; i++) {
          for (const digit of '0123456789') {
            if (digit === number[i]) continue;
            const typo = `${number.slice(0, i)}${digit}${number.slice(i + 1)}`;
            expect(isValidAccountNumber(typo)).toBe(false);
          }
          if (i + 1 < number.length && number[i] !== number[i + 1]) {
            const swapped = `${number.slice(0, i)}${number[i + 1]}${number[i]}${number.slice(i + 2)}`;
            // A swap into a leading zero is refused by the shape alone; every other by the check digit.
            expect(isValidAccountNumber(swapped)).toBe(false);
          }
        }
      }),
      { numRuns: 50 },
    );
  });

  it('takes a number as payers write it, and refuses other shapes', () => {
    const number = accountNumberFromRandom(new Uint8Array(11).fill(7));
    expect(normaliseAccountNumber(` ${number.slice(0, 4)} ${number.slice(4, 8)}-${number.slice(8)} `)).toBe(
      number,
    );
    expect(isValidAccountNumber(`0${number.slice(1)}`)).toBe(false);
    expect(isValidAccountNumber(number.slice(1))).toBe(false);
    expect(isValidAccountNumber(`${number}0`)).toBe(false);
    expect(isValidAccountNumber(`MK${number}`)).toBe(false);
  });
});

describe('instants and periods', () => {
  it('reads a date as the start or the end of its UTC day, and a time with its offset', () => {
    expect(parseInstant('2026-11-01', 'from', 'start').toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(parseInstant('2026-11-30', 'to', 'end').toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(parseInstant('2026-11-01T03:00:00+03:00', 'from', 'start').toISOString()).toBe(
      '2026-11-01T00:00:00.000Z',
    );
    expect(parseInstant('2026-11-01T00:00:00.123Z', 'to', 'end').toISOString()).toBe(
      '2026-11-01T00:00:00.123Z',
    );
  });

  it('refuses what is not a date or a time to the millisecond with its offset', () => {
    for (const bad of [
      '2026-02-30',
      '2026-02-30T00:00:00Z',
      '2026-11-01T00:00:00',
      '2026-11-01T00:00:00.1234Z',
      '1 Nov 2026',
      '2026-11-01T25:00:00Z',
    ]) {
      expect(
        faultOf(() => parseInstant(bad, 'from', 'start')),
        bad,
      ).toEqual({
        status: 400,
        param: 'from',
        code: 'invalid_format',
      });
    }
  });

  it('bounds a statement: to after from, at most the longest period, from not in the future', () => {
    expect(faultOf(() => statementPeriod('2026-11-02', '2026-11-01', NOW))).toMatchObject({ param: 'to' });
    expect(faultOf(() => statementPeriod('2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z', NOW))).toMatchObject(
      { param: 'to', code: 'out_of_range' },
    );
    const start = new Date(NOW.getTime() - (STATEMENT_PERIOD_DAYS_MAX + 1) * 86_400_000);
    expect(faultOf(() => statementPeriod(start.toISOString(), NOW.toISOString(), NOW))).toMatchObject({
      param: 'to',
      code: 'out_of_range',
    });
    expect(faultOf(() => statementPeriod('2026-11-27', '2026-11-28', NOW))).toMatchObject({ param: 'from' });
  });

  it('ends a period that has not ended at now, and says so', () => {
    expect(statementPeriod('2026-11-01', '2026-11-30', NOW)).toEqual({
      from: new Date('2026-11-01T00:00:00Z'),
      to: NOW,
      running: true,
    });
    expect(statementPeriod('2026-10-01', '2026-10-31', NOW)).toEqual({
      from: new Date('2026-10-01T00:00:00Z'),
      to: new Date('2026-11-01T00:00:00Z'),
      running: false,
    });
  });

  it('reads a balance as of a past instant only', () => {
    expect(balanceInstant('2026-11-25', NOW).toISOString()).toBe('2026-11-26T00:00:00.000Z');
    expect(balanceInstant(NOW.toISOString(), NOW)).toEqual(NOW);
    expect(faultOf(() => balanceInstant('2026-11-26', NOW))).toMatchObject({
      param: 'as_of',
      code: 'out_of_range',
    });
  });
});

describe('statements', () => {
  it('runs the balance from the opening and checks it against the closing', () => {
    const statement = buildStatement(
      {
        walletId: 'wallet_x',
        currency: 'KES',
        period: { from: NOW, to: NOW, running: false },
        openingMinor: 1_000n,
        closingMinor: 700n,
        accountDetails: null,
        generatedAt: NOW,
      },
      [movement('je_1', 500n), movement('je_2', -800n)],
    );
    expect(statement.lines.map((l) => l.balanceMinor)).toEqual([1_500n, 700n]);
    expect(statement).toMatchObject({ creditsMinor: 500n, debitsMinor: 800n });
    expect(() =>
      buildStatement(
        {
          walletId: 'wallet_x',
          currency: 'KES',
          period: { from: NOW, to: NOW, running: false },
          openingMinor: 1_000n,
          closingMinor: 701n,
          accountDetails: null,
          generatedAt: NOW,
        },
        [movement('je_1', 500n), movement('je_2', -800n)],
      ),
    ).toThrow(/closing 701/);
  });

  it('describes each kind of movement with its counterparty', () => {
    const transfer = {
      id: 'tr_1',
      direction: 'outbound' as const,
      sourceWalletId: 'wallet_a',
      destinationWalletId: null,
      rail: 'mobile_money',
      statusReason: null,
      maskedDestination: 'mpesa +254••••••12',
    };
    const base = { entryKind: 'post', payer: null, otherAccountKinds: [] };
    expect(describeMovement({ ...base, netMinor: -100n, transfer })).toEqual({
      description: 'Payout by mobile_money',
      counterparty: 'mpesa +254••••••12',
    });
    expect(
      describeMovement({
        ...base,
        netMinor: -100n,
        transfer: { ...transfer, destinationWalletId: 'wallet_b' },
      }),
    ).toEqual({ description: 'Transfer sent', counterparty: 'wallet_b' });
    expect(
      describeMovement({
        ...base,
        netMinor: 100n,
        transfer: { ...transfer, destinationWalletId: 'wallet_b' },
      }),
    ).toEqual({ description: 'Transfer received', counterparty: 'wallet_a' });
    expect(
      describeMovement({
        ...base,
        netMinor: 100n,
        payer: 'Jane Payer',
        transfer: { ...transfer, direction: 'inbound', sourceWalletId: null, statusReason: 'bank_deposit' },
      }),
    ).toEqual({ description: 'Bank deposit', counterparty: 'Jane Payer' });
    expect(describeMovement({ ...base, entryKind: 'reversal', netMinor: 100n, transfer })).toEqual({
      description: 'Return of tr_1',
      counterparty: 'mpesa +254••••••12',
    });
    expect(
      describeMovement({ ...base, netMinor: -100n, transfer: null, otherAccountKinds: ['conversion'] }),
    ).toEqual({ description: 'Conversion', counterparty: null });
  });
});
