/**
 * Prefixed, random, URL-safe ids that sort by creation time: `<prefix>_` + 10 Crockford base32
 * characters of milliseconds + 16 of randomness (the ULID layout, lower-cased).
 */
export const ID_PREFIXES = {
  organization: 'org',
  apiKey: 'key',
  customer: 'cus',
  wallet: 'wallet',
  transfer: 'tr',
  event: 'evt',
  webhookSubscription: 'whsub',
  webhookDelivery: 'whdel',
  journalEntry: 'je',
  ledgerAccount: 'acct',
  approval: 'apr',
  paymentBatch: 'pb',
  reconciliation: 'rec',
  export: 'exp',
  evidence: 'evd',
  review: 'rev',
  verification: 'kyc',
  amlRule: 'amlr',
  amlAlert: 'amla',
  request: 'req',
  sanctionsList: 'sl',
  statement: 'stmt',
  reconciliationException: 'recx',
  member: 'mem',
  policyChange: 'polc',
  governedChange: 'chg',
  railPartner: 'rp',
  railCallback: 'rcb',
  railReversal: 'rrv',
  railBalanceQuery: 'rbq',
  verificationProviderCall: 'vpc',
  railPartnerCall: 'rpcl',
  custodySweep: 'csw',
  custodyNetworkFee: 'cnf',
  collection: 'col',
  trustAccount: 'ta',
  safeguardingBalance: 'sgb',
  safeguardingReport: 'sgr',
  safeguardingSweep: 'sgs',
  depositAddress: 'da',
  deposit: 'dep',
  conversionQuote: 'cq',
  conversion: 'conv',
  conversionRateVersion: 'crv',
  savingsProduct: 'svp',
  savingsNotice: 'svn',
  savingsWithdrawal: 'svw',
  consoleSession: 'csn',
  consoleSignInLink: 'csl',
  loanProduct: 'lp',
  loan: 'loan',
  loanRepayment: 'lrp',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;
export type IdPrefix = (typeof ID_PREFIXES)[IdKind];

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
export const ID_TIME_CHARS = 10;
export const ID_RANDOM_CHARS = 16;
/** Bytes of randomness an id needs: 16 base32 characters carry 80 bits. */
export const ID_RANDOM_BYTES = 10;

function encodeTime(timeMs: number): string {
  let out = '';
  let rest = timeMs;
  for (let i = 0; i < ID_TIME_CHARS; i++) {
    out = ALPHABET.charAt(rest % 32) + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

/**
 * The first `bytes` of `random` as `chars` lowercase Crockford base32 characters, the last character
 * carrying the lowest bits (bits beyond `chars` × 5 are dropped). Ids and receipt codes are made of these.
 */
export function base32OfRandom(random: Uint8Array, bytes: number, chars: number): string {
  let bits = 0n;
  for (const byte of random.subarray(0, bytes)) bits = (bits << 8n) | BigInt(byte);
  let out = '';
  for (let i = 0; i < chars; i++) {
    out = ALPHABET.charAt(Number(bits & 31n)) + out;
    bits >>= 5n;
  }
  return out;
}

export function formatId(prefix: IdPrefix, timeMs: number, random: Uint8Array): string {
  return `${prefix}_${encodeTime(timeMs)}${base32OfRandom(random, ID_RANDOM_BYTES, ID_RANDOM_CHARS)}`;
}

/** The pattern of an id with this prefix, or with any of these prefixes. */
export function idPattern(prefix: IdPrefix | readonly IdPrefix[]): string {
  const prefixes = typeof prefix === 'string' ? prefix : `(?:${prefix.join('|')})`;
  return `^${prefixes}_[0-9a-hjkmnp-tv-z]{${ID_TIME_CHARS + ID_RANDOM_CHARS}}$`;
}

const patternCache = new Map<string, RegExp>();
export function isId(prefix: IdPrefix, value: string): boolean {
  let pattern = patternCache.get(prefix);
  if (!pattern) {
    pattern = new RegExp(idPattern(prefix));
    patternCache.set(prefix, pattern);
  }
  return pattern.test(value);
}
