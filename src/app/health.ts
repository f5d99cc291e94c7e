/** Whether the service can serve: its readiness check. */
import { ping } from '../store/repositories/seeds.ts';
import type { Deps } from './deps.ts';

/** Resolves once the database answers; throws when it does not. */
export async function pingDatabase(deps: Deps): Promise<void> {
  await ping(deps.store);
}
