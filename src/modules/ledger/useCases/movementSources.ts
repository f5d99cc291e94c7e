/** The checks on a movement's source wallet that other use cases supply (`deps.movementSourceGuards`). */

import type { Deps } from '../../../app/deps.ts';
import type { Queryable } from '../../../store/store.ts';

/** Refuses a movement out of the wallet when a guard does (a savings account cannot send). */
export async function guardMovementSource(
  deps: Deps,
  db: Queryable,
  walletId: string,
  param: string,
): Promise<void> {
  for (const guard of deps.movementSourceGuards) await guard(deps, db, walletId, param);
}
