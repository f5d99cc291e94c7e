/** Caller-supplied key/value pairs, bounded like Stripe's so a record never grows without limit. */
export const METADATA_KEYS_MAX = 50;
export const METADATA_KEY_LENGTH_MAX = 40;
export const METADATA_VALUE_LENGTH_MAX = 500;

export type Metadata = Record<string, string>;
