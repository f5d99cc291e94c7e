/**
 * A worker that dies between Smile ID's acceptance of a job and Mkoba's record of it: on restart no
 * second job is sent (so none is billed) for the verification, and it is decided exactly once. The job_id
 * is Mkoba's (partner_params.job_id = the verification's id), so the restarted worker asks /job_status
 * before sending again; Smile ID refusing a repeated job_id (2215) is the second guard.
 *
 * How the death is made: the pass is stopped at the exact point, the first transaction after Smile ID
 * answered (where the acceptance would be recorded), by a store whose next transaction throws: nothing
 * after it runs in that pass, as in a killed process, and the database holds what a SIGKILL would leave
 * (the job leased and `submitting`, its lease running). The restart is a new pass once the lease has run
 * out. Here on both backends and in three cases; test/e2e/smile-id-crash.test.ts kills a real worker
 * process at Smile ID's acceptance on PostgreSQL and lets a second one take over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSmileIdJobsOnce } from '../src/modules/compliance/index.ts';
import { SMILE_ID_LEASE_MS } from '../src/modules/compliance/useCases/smileId/jobs.ts';
import type { Store } from '../src/store/store.ts';
import { api, BACKENDS } from './support/harness.ts';
import { eventually, type SmileIdSetup, startSmileIdSetup, submitKyc } from './support/smileId.ts';

class ProcessKilled extends Error {}

describe.each(BACKENDS)('a worker killed after Smile ID accepted a job, on %s', (backend) => {
  let s: SmileIdSetup;

  beforeAll(async () => {
    s = await startSmileIdSetup(backend);
  });
  afterAll(async () => {
    await s?.close();
  });

  const submissions = (id: string) =>
    s.simulator.requests.filter((r) => r.path === '/v1/async_id_verification' && r.rawBody.includes(id));
  const decisions = async (id: string) =>
    (
      await s.t.deps.store.query(
        "SELECT payload FROM evidence_records WHERE kind = 'verification.result' AND payload LIKE '%' || $1 || '%'",
        [id],
      )
    ).length;

  /** Runs one pass that dies at the first transaction after Smile ID received the verification's job. */
  async function passKilledAfterAcceptance(id: string): Promise<void> {
    const store: Store = s.t.deps.store;
    const transaction = store.transaction;
    store.transaction = ((work) => {
      if (submissions(id).length > 0) throw new ProcessKilled('killed before the acceptance was recorded');
      return transaction.call(store, work);
    }) as Store['transaction'];
    try {
      await expect(runSmileIdJobsOnce(s.t.deps)).rejects.toBeInstanceOf(ProcessKilled);
    } finally {
      store.transaction = transaction;
    }
    const [job] = await store.query('SELECT state FROM verification_jobs WHERE verification_id = $1', [id]);
    expect(job?.state).toBe('submitting');
    expect(s.simulator.job(id)).toBeDefined();
  }

  const afterLease = () => new Date(Date.now() + SMILE_ID_LEASE_MS + 1_000);

  it('with no callback: the restarted worker asks /job_status, sends nothing again, and decides once', async () => {
    const id = await submitKyc(s.t, s.org.key, '27009002'); // Smile ID never calls back
    await passKilledAfterAcceptance(id);
    await runSmileIdJobsOnce(s.t.deps, afterLease());
    expect(submissions(id)).toHaveLength(1);
    expect(s.simulator.requests.some((r) => r.path === '/v1/job_status' && r.rawBody.includes(id))).toBe(
      true,
    );
    const shown = await api(s.t, 'GET', `/v1/verifications/${id}`, { key: s.org.key });
    expect(shown.data).toMatchObject({ status: 'verified', decided_by: 'provider' });
    await runSmileIdJobsOnce(s.t.deps, new Date(afterLease().getTime() + SMILE_ID_LEASE_MS));
    expect(submissions(id)).toHaveLength(1);
    expect(await decisions(id)).toBe(1);
  });

  it('with a callback while it was down: decided by the callback once; the restart sends nothing', async () => {
    const id = await submitKyc(s.t, s.org.key, '27001234');
    await passKilledAfterAcceptance(id);
    await eventually(async () => (await decisions(id)) === 1, 'the callback');
    const before = s.simulator.requests.length;
    await runSmileIdJobsOnce(s.t.deps, afterLease());
    expect(s.simulator.requests.length).toBe(before);
    expect(submissions(id)).toHaveLength(1);
    expect(await decisions(id)).toBe(1);
  });

  it('still pending at Smile ID: the restart waits for it as submitted, and a repeated job_id is refused 2215', async () => {
    const id = await submitKyc(s.t, s.org.key, '27009004'); // never completes until told
    await passKilledAfterAcceptance(id);
    await runSmileIdJobsOnce(s.t.deps, afterLease());
    expect(submissions(id)).toHaveLength(1);
    const [job] = await s.t.deps.store.query(
      'SELECT state FROM verification_jobs WHERE verification_id = $1',
      [id],
    );
    expect(job?.state).toBe('submitted');
    const repeated = await fetch(`${s.simulator.apiUrl}/async_id_verification`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: submissions(id)[0]?.rawBody,
    });
    expect(await repeated.json()).toMatchObject({ code: '2215' });
    expect(s.simulator.job(id)).toBeDefined();
  });
});
