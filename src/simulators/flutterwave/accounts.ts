/**
 * The Flutterwave simulator's magic bank accounts and its bank list. An account number decides what
 * resolving it says and how a transfer to it ends, so tests and local runs can reach every outcome on
 * purpose. Any other 10-digit number resolves to a name made from its digits and its transfers succeed.
 */

export type FlutterwaveAccountBehaviour =
  | { kind: 'succeed' }
  | { kind: 'fail'; completeMessage: string }
  /** Stays PENDING, and no webhook is ever sent: only polling finds out (and it never ends). */
  | { kind: 'stay_pending' };

export interface FlutterwaveSimulatorAccount {
  accountNumber: string;
  /** The name POST /v3/accounts/resolve answers, or undefined for an account that does not resolve. */
  accountName: string | undefined;
  behaviour: FlutterwaveAccountBehaviour;
}

/** The magic account numbers (any bank code). Documented in docs/rails/flutterwave.md. */
export const FLUTTERWAVE_SIMULATOR_ACCOUNTS = {
  /** Flutterwave's own test account number: resolves, and a transfer to it succeeds. */
  resolvesAndSucceeds: {
    accountNumber: '0690000032',
    accountName: 'Pastor Bright',
    behaviour: { kind: 'succeed' },
  },
  unresolvable: { accountNumber: '0690000040', accountName: undefined, behaviour: { kind: 'succeed' } },
  transferFails: {
    accountNumber: '0690000041',
    accountName: 'Ngozi Adeyemi',
    behaviour: { kind: 'fail', completeMessage: 'DISBURSE FAILED: Beneficiary account is dormant' },
  },
  staysPending: {
    accountNumber: '0690000042',
    accountName: 'Musa Bello',
    behaviour: { kind: 'stay_pending' },
  },
} as const satisfies Record<string, FlutterwaveSimulatorAccount>;

const ACCOUNT_NUMBER_PATTERN = /^\d{10}$/;

/** The account behind a number: a magic one, a made-up holder for any other 10 digits, or none. */
export function accountOf(accountNumber: string): FlutterwaveSimulatorAccount | undefined {
  const magic = Object.values(FLUTTERWAVE_SIMULATOR_ACCOUNTS).find(
    (account) => account.accountNumber === accountNumber,
  );
  if (magic !== undefined) return magic;
  if (!ACCOUNT_NUMBER_PATTERN.test(accountNumber)) return undefined;
  return {
    accountNumber,
    accountName: `Account Holder ${accountNumber.slice(-4)}`,
    behaviour: { kind: 'succeed' },
  };
}

export interface FlutterwaveBank {
  id: number;
  code: string;
  name: string;
}

/** A few real banks per country, as GET /v3/banks/{country} lists them (id, code, name). */
export const FLUTTERWAVE_SIMULATOR_BANKS: Readonly<Record<string, readonly FlutterwaveBank[]>> = {
  NG: [
    { id: 191, code: '044', name: 'Access Bank' },
    { id: 192, code: '058', name: 'GTBank Plc' },
    { id: 193, code: '057', name: 'Zenith Bank' },
    { id: 194, code: '035', name: 'Wema Bank' },
  ],
  GH: [
    { id: 201, code: 'GH280100', name: 'Access Bank Ghana' },
    { id: 202, code: 'GH230100', name: 'GCB Bank' },
  ],
  KE: [
    { id: 301, code: '01', name: 'Kenya Commercial Bank' },
    { id: 302, code: '68', name: 'Equity Bank' },
  ],
};

/** The bank's name for a code, as transfers and webhooks show it. */
export function bankNameOf(code: string): string {
  for (const banks of Object.values(FLUTTERWAVE_SIMULATOR_BANKS)) {
    const bank = banks.find((candidate) => candidate.code === code);
    if (bank !== undefined) return bank.name;
  }
  return 'SIMULATED BANK';
}
