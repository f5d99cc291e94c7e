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
  // The first `bytes` bytes as one big-endian number, written in `chars` base-32 digits (its lowest 5 × chars
  // bits), taken from the last byte up a few bits at a time: plain numbers, since a BigInt per step cost more
  // than the rest of making an id.
  let out = '';
  let pending = 0;
  let pendingBits = 0;
  let index = bytes - 1;
  for (let i = 0; i < chars; i++) {
    if (pendingBits < 5 && index >= 0) {
      pending |= (random[index] ?? 0) << pendingBits;
      pendingBits += 8;
      index -= 1;
    }
    out = ALPHABET.charAt(pending & 31) + out;
    pending >>>= 5;
    pendingBits = Math.max(pendingBits - 5, 0);
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
