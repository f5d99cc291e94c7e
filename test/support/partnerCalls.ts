/** The call log's tests' shared steps: one rail worker pass through the directory, and a read of the log. */
import { expect } from 'vitest';
import { railPartnerDirectory } from '../../src/modules/railPartners/useCases/directory.ts';
import { runRailWorkerOnce } from '../../src/modules/transfers/workers.ts';
import { payoutRailResolver } from '../../src/railWork.ts';
import { api, type TestApp } from './harness.ts';

export type PartnerCall = Record<string, unknown>;

/** One rail worker pass, each payout through its partner as production resolves it. */
export const partnerRailWork = (t: TestApp) =>
  runRailWorkerOnce(t.deps, payoutRailResolver(railPartnerDirectory(t.deps), 'production'), {
    log: () => {},
  });

/** The organization's calls matching `query`, oldest first to read as a story. */
export async function partnerCallsOf(t: TestApp, key: string, query: string): Promise<PartnerCall[]> {
  const page = await api(t, 'GET', `/v1/rail-partner-calls?limit=100&${query}`, { key });
  expect(page.statusCode, page.body).toBe(200);
  return (page.data.data as PartnerCall[]).reverse();
}
