/**
 * An organization's clock: the real one, or in the sandbox a test clock an integrator advances; and the once-a-day work each product runs for every day the clock crosses.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { testClockRoutes, testClockSchema } from './routes.ts';

export { daysAfter, nextDay, utcDay } from './domain.ts';
export { testClockRoutes, testClockSchema } from './routes.ts';
export { organizationNow } from './useCases/testClock.ts';
export { DAY_WORKER_INTERVAL_MS, runDayWorkerOnce } from './workers.ts';

/** The module's face on the HTTP edge. */
export const testClockHttp: HttpModule = {
  schemas: [testClockSchema],
  routes: testClockRoutes,
  sandboxOnly: true,
};
