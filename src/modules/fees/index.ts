/**
 * Fees: the organization's fee schedule (rules by rail and currency: fixed, percentage or tiered), changed
 * as a governed change and versioned; the fee a movement is charged, decided inside the transaction that
 * moves the money (transfers, payment batches, conversions, fixed-term savings withdrawals), and the income
 * account it is credited to. The fee a transfer carries (`FeeDecision`) is the core's transfer record's.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { feeRoutes } from './routes/routes.ts';
import { FEE_SCHEMAS } from './routes/schemas.ts';

export { decideFee, FEE_CONVERSION_RAIL, type FeeSchedule, parseFeeRules } from './domain.ts';
export { FEE_TAGS } from './routes/routes.ts';
export { currentFeeScheduleIn, feeIncomeAccount, loadFeeSchedule, updateFeeSchedule } from './useCases.ts';

/** The module's face on the HTTP edge. */
export const feesHttp: HttpModule = { schemas: FEE_SCHEMAS, routes: feeRoutes };
