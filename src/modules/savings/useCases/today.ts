/** The organization's today, the day every savings use case reads its clock as. */

import type { Deps } from '../../../app/deps.ts';
import type { Queryable } from '../../../store/store.ts';
import { organizationNow, utcDay } from '../../testClock/index.ts';

/** The organization's today: its test clock's in the sandbox, the real one otherwise. */
export async function organizationToday(db: Queryable, deps: Deps, organizationId: string): Promise<string> {
  return utcDay(await organizationNow(db, deps, organizationId));
}
