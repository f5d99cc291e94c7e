/**
 * M-Pesa Account Balance through Daraja (rail.ts): asks for the B2C shortcode's balances (the answer is an
 * acceptance; the balances arrive at `balance/result`), and reads that result into exact minor units per
 * account, and into the rail interface's balances report (the query it answers is recorded by the service).
 */

import { isCurrency } from '../../../../domain/money.ts';
import type { BalancesReport } from '../../../../rails/balances.ts';
import { MalformedCallbackError } from '../../../../rails/partner.ts';
import { keyValues, objectField, requiredString, resultCodeOf } from './callbackFields.ts';
import { type DarajaConnection, post, securityCredential, unexpected } from './connection.ts';
import { DARAJA_CALLBACK_PATHS, KES_MINOR_PER_SHILLING, PATHS, stringField } from './protocol.ts';

/** What Daraja accepted: the query's ids, which its result echoes. */
export interface DarajaBalanceQuery {
  originatorConversationId: string;
  conversationId: string;
}

/** One account of the `AccountBalance` string, its amounts in minor units (cents). */
export interface DarajaAccountBalance {
  account: string;
  currency: string;
  /** The four amounts in the string's order; their names are assumed (see docs/rails/mpesa-daraja.md). */
  currentMinor: bigint;
  availableMinor: bigint;
  reservedMinor: bigint;
  unclearedMinor: bigint;
}

export type DarajaBalanceResult =
  | {
      kind: 'balances';
      originatorConversationId: string;
      accounts: DarajaAccountBalance[];
      /** `BOCompletedTime` as sent: Nairobi time, YYYYMMDDHHmmss. */
      completedTime?: string;
    }
  | { kind: 'failed'; originatorConversationId: string; resultCode: string; resultDesc?: string };

/** The amounts each account carries in the string, after its name and currency. */
const AMOUNTS_PER_ACCOUNT = 4;

/** Asks for the shortcode's balances; throws when Daraja does not accept (a refusal here is our bug or set-up). */
export async function queryAccountBalance(connection: DarajaConnection): Promise<DarajaBalanceQuery> {
  const { config, callbackBase } = connection;
  const answer = await post(connection, PATHS.accountBalance, {
    Initiator: config.initiatorName,
    SecurityCredential: securityCredential(connection),
    CommandID: 'AccountBalance',
    PartyA: config.shortCode,
    IdentifierType: '4', // PartyA is an organization shortcode
    Remarks: 'Balance',
    QueueTimeOutURL: `${callbackBase}/${DARAJA_CALLBACK_PATHS.balanceQueueTimeout}`,
    ResultURL: `${callbackBase}/${DARAJA_CALLBACK_PATHS.balanceResult}`,
  });
  const originatorConversationId = stringField(answer.body, 'OriginatorConversationID');
  const conversationId = stringField(answer.body, 'ConversationID');
  if (
    answer.status !== 200 ||
    String(answer.body?.ResponseCode) !== '0' ||
    originatorConversationId === undefined ||
    conversationId === undefined
  ) {
    return unexpected(PATHS.accountBalance, answer);
  }
  return { originatorConversationId, conversationId };
}

/** An Account Balance result body; throws MalformedCallbackError for one not in Daraja's shape. */
export function parseDarajaBalanceResult(body: Record<string, unknown>): DarajaBalanceResult {
  const result = objectField(body, 'Result', 'balance result');
  const originatorConversationId = requiredString(result, 'OriginatorConversationID', 'balance result');
  const code = resultCodeOf(result, 'balance result');
  if (code !== '0') {
    const resultDesc = typeof result.ResultDesc === 'string' ? result.ResultDesc : undefined;
    return { kind: 'failed', originatorConversationId, resultCode: code, resultDesc };
  }
  const parameters = keyValues(result.ResultParameters, 'ResultParameter', 'Key', 'balance result');
  const text = parameters.get('AccountBalance');
  if (typeof text !== 'string' || text.trim() === '') {
    throw new MalformedCallbackError('balance result reports success without an AccountBalance');
  }
  const completed = parameters.get('BOCompletedTime');
  return {
    kind: 'balances',
    originatorConversationId,
    accounts: text.split('&').map(accountOf),
    ...(completed === undefined ? {} : { completedTime: String(completed) }),
  };
}

/** `Name|Currency|a|b|c|d` → the account with its amounts in minor units. */
function accountOf(entry: string): DarajaAccountBalance {
  const parts = entry.split('|').map((part) => part.trim());
  const [account, currency, ...amounts] = parts;
  if (!account || !currency || amounts.length !== AMOUNTS_PER_ACCOUNT) {
    throw new MalformedCallbackError(`balance result account "${entry}" is not Name|Currency|four amounts`);
  }
  const [current, available, reserved, uncleared] = amounts.map((amount) => signedMinor(amount, account));
  return {
    account,
    currency,
    currentMinor: current as bigint,
    availableMinor: available as bigint,
    reservedMinor: reserved as bigint,
    unclearedMinor: uncleared as bigint,
  };
}

/** A decimal string ("453845.00", "-660.00") in minor units, exactly; never through a float. */
function signedMinor(text: string, account: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!match?.[2])
    throw new MalformedCallbackError(`balance result ${account} amount "${text}" is not an amount`);
  const magnitude = BigInt(match[2]) * KES_MINOR_PER_SHILLING + BigInt((match[3] ?? '').padEnd(2, '0'));
  return match[1] === '-' ? -magnitude : magnitude;
}

/** Result codes of a balance query that mean our configuration is wrong, as for payouts. */
const CONFIGURATION_RESULT_CODES = new Set(['2001']);

/** An Account Balance result as the rail interface reports it: the query's balances, or why there are none. */
export function darajaBalancesReport(body: Record<string, unknown>): BalancesReport {
  const result = parseDarajaBalanceResult(body);
  if (result.kind === 'failed') {
    return {
      kind: 'balances',
      reference: result.originatorConversationId,
      outcome: {
        kind: 'failed',
        failureCode: CONFIGURATION_RESULT_CODES.has(result.resultCode)
          ? 'partner_configuration_error'
          : 'partner_rejected',
      },
    };
  }
  const accounts = result.accounts.map((a) => {
    if (!isCurrency(a.currency)) {
      throw new MalformedCallbackError(
        `balance result ${a.account} is in "${a.currency}", no currency we know`,
      );
    }
    return {
      account: a.account,
      currency: a.currency,
      availableMinor: a.availableMinor,
      currentMinor: a.currentMinor,
    };
  });
  return {
    kind: 'balances',
    reference: result.originatorConversationId,
    outcome: { kind: 'reported', accounts },
  };
}
