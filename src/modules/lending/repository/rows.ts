/** How the lending tables' nullable columns read: `null` stays `null`, anything else is converted. */
import { toBigInt, toDate } from '../../../store/repositories/rows.ts';

export const nullableText = (v: unknown) => (v === null || v === undefined ? null : String(v));
export const nullableDate = (v: unknown) => (v === null || v === undefined ? null : toDate(v));
export const nullableBigInt = (v: unknown) => (v === null || v === undefined ? null : toBigInt(v));
/** A `date` column read as `YYYY-MM-DD` (the SELECTs cast it to text). */
export const nullableDay = (v: unknown) => (v === null || v === undefined ? null : String(v).slice(0, 10));
