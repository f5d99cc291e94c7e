/** How the webhook tables' nullable columns read: `null` stays `null`, anything else is converted. */
import { toDate } from '../../../store/repositories/rows.ts';

export const optionalDate = (v: unknown) => (v === null || v === undefined ? null : toDate(v));
