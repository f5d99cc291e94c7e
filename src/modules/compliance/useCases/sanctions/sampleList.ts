/**
 * The sample sanctions list of the sandbox (invented names, `data/sanctions/sample.csv`): imported once per
 * database by the sandbox seed, so a sandbox screens against an active list from its first start.
 */
import { fileURLToPath } from 'node:url';
import type { Deps } from '../../../../app/deps.ts';
import { claimSeed, seedClaimed } from '../../../../store/repositories/seeds.ts';
import { findActiveVersionId } from '../../repository/sanctions.ts';
import { importSanctionsList } from './importList.ts';

export const SAMPLE_SANCTIONS_LIST_FILE = fileURLToPath(
  new URL('../../../../../data/sanctions/sample.csv', import.meta.url),
);
const SAMPLE_SANCTIONS_SEED_NAME = 'sanctions_sample_v1';

/**
 * Imports the sample list unless it was imported before, or a list is active already (one the operator
 * imported is never replaced by the sample). The import commits in steps of its own, so the seed is
 * claimed after it succeeds: a start that dies half-way imports it again next time (two processes starting
 * at once may both import it, which only makes the second copy the active version).
 */
export async function seedSampleSanctionsList(deps: Deps): Promise<void> {
  if (await seedClaimed(deps.store, SAMPLE_SANCTIONS_SEED_NAME)) return;
  if ((await findActiveVersionId(deps.store)) === undefined) {
    await importSanctionsList(deps, SAMPLE_SANCTIONS_LIST_FILE);
  }
  await claimSeed(deps.store, SAMPLE_SANCTIONS_SEED_NAME, deps.now());
}
