/**
 * A real `mkoba worker` killed (SIGKILL) the moment Smile ID has accepted a verification's job, before its
 * answer leaves, so the worker cannot record the acceptance: a second `mkoba worker` takes the job over once the first's lease has run
 * out (MKOBA_SMILE_ID_LEASE_MS, shortened for the test), asks /job_status by the job's id before sending
 * anything again, and decides the verification once; the late callback that follows changes nothing. The
 * Smile ID simulator is a real HTTP server in this process, whose `beforeAnswer` hook does the killing once
 * the job is accepted, before the answer is written out. Organizations and verifications are made through the in-process
 * app on the same PostgreSQL schema, which listens on a real port for Smile ID's callback and runs no
 * workers, so only the worker processes send and poll jobs. The killed worker's submission stays in the call
 * log as `sent`: recorded before it left, its answer never recorded.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/variables.ts';
import { loadConfig } from '../../src/config.ts';
import { SMILE_ID_LEASE_MS } from '../../src/modules/compliance/useCases/smileId/jobs.ts';
import { type SmileIdSimulator, startSmileIdSimulator } from '../../src/simulators/smileId/index.ts';
import { eventually } from '../support/eventually.ts';
import { api, startTestApp, TEST_DATABASE_URL, type TestApp } from '../support/harness.ts';
import { newOrganization, type TestOrganization } from '../support/organizations.ts';
import { smileIdConfiguration, submitKyc } from '../support/smileId.ts';
import { killOnAcceptance } from './killOnAcceptance.ts';
import { E2E_TEST_TIMEOUT_MS, MkobaProcesses, mkobaEnv, withTimeout } from './mkobaProcess.ts';

/** How long a worker gets to reach Smile ID, and the second one to decide (each wait ends on its event). */
const WORKER_WAIT_MS = 20_000;
/** The workers' lease on a job: short, so the second takes over within seconds. */
const TEST_LEASE_MS = 1_000;
/** The simulator's late callback: held until the test sends it, after the poll has decided. */
const LATE_CALLBACK_HELD_MS = 10 * 60_000;
/** A Kenyan national ID the simulator finds valid (1012) and calls back about only late (`9001`). */
const LATE_CALLBACK_ID_NUMBER = '27009001';
const SUBMIT_PATH = '/v1/async_id_verification';

describe('MKOBA_SMILE_ID_LEASE_MS', () => {
  it('is the lease on a Smile ID job: a minute by default, bounded', () => {
    expect(loadConfig({}).smileIdLeaseMs).toBe(SMILE_ID_LEASE_MS);
    expect(loadConfig({ MKOBA_SMILE_ID_LEASE_MS: '1500' }).smileIdLeaseMs).toBe(1_500);
    for (const bad of ['999', '600001', '-1', '1.5', 'soon', '1e4']) {
      expect(() => loadConfig({ MKOBA_SMILE_ID_LEASE_MS: bad }), bad).toThrow(ConfigError);
    }
  });
});

describe.skipIf(!TEST_DATABASE_URL)(
  'a worker killed after Smile ID accepted a job (PostgreSQL)',
  { timeout: E2E_TEST_TIMEOUT_MS },
  () => {
    const processes = new MkobaProcesses();
    const hook = killOnAcceptance('POST', SUBMIT_PATH);
    let t: TestApp;
    let sim: SmileIdSimulator;
    let org: TestOrganization;
    let officer: string;
    let env: NodeJS.ProcessEnv;
    beforeAll(async () => {
      t = await startTestApp('postgres', 'sandbox');
      // Smile ID's callback comes here: the address the workers give it.
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      sim = await startSmileIdSimulator({
        beforeAnswer: hook.beforeAnswer,
        lateCallbackDelayMs: LATE_CALLBACK_HELD_MS,
      });
      org = await newOrganization(t);
      const configured = await api(t, 'PUT', '/v1/verification_provider', {
        key: org.key,
        body: smileIdConfiguration(sim),
      });
      expect(configured.statusCode, configured.body).toBe(200);
      officer = (await org.member(['compliance'])).key;
      const url = new URL(t.db.url as string);
      env = mkobaEnv({
        DATABASE_URL: url.toString(),
        MKOBA_ENV: 'sandbox',
        MKOBA_SANDBOX_SIMULATORS: '0',
        MKOBA_PUBLIC_URL: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`,
        MKOBA_ENCRYPTION_KEY: t.encryptionKey,
        MKOBA_SMILE_ID_LEASE_MS: String(TEST_LEASE_MS),
      });
    });
    afterAll(async () => {
      await processes.killAll();
      await sim?.close();
      await t?.close();
    });

    const verificationOf = async (id: string) =>
      (await api(t, 'GET', `/v1/verifications/${id}`, { key: org.key })).data;
    const jobOf = async (id: string) =>
      (
        await t.db.store.query(
          'SELECT state, attempts, result_code, next_attempt_at FROM verification_jobs WHERE verification_id = $1',
          [id],
        )
      )[0];
    const requestsFor = (id: string, path: string) =>
      sim.requests.filter((r) => r.path === path && r.rawBody.includes(id));
    async function callsOf(id: string) {
      const page = await api(t, 'GET', `/v1/verification-provider-calls?verification=${id}`, {
        key: officer,
      });
      expect(page.statusCode, page.body).toBe(200);
      return (page.data.data as Record<string, unknown>[]).reverse();
    }

    it('a KYC job: looked up by its job_id after the lease ran out, one job at Smile ID, decided once', async () => {
      const id = await submitKyc(t, org.key, LATE_CALLBACK_ID_NUMBER);
      const first = await processes.start(['worker'], env);
      hook.arm(first);
      const exit = await withTimeout(first.exited, WORKER_WAIT_MS, 'Smile ID never accepted the job').catch(
        (error: Error) => {
          throw new Error(`${error.message}; the worker said:\n${first.stderr()}`);
        },
      );
      expect(exit.signal, first.stderr()).toBe('SIGKILL');
      expect(hook.killed()).toBe(true);
      // Smile ID holds the job; Mkoba has not recorded the acceptance, and the dead worker's lease runs.
      expect(sim.job(id)).toBeDefined();
      const leased = await jobOf(id);
      expect(leased).toMatchObject({ state: 'submitting', attempts: 1 });
      const leasedUntil = new Date(leased?.next_attempt_at as string | Date).getTime();
      expect((await verificationOf(id)).status).toBe('pending');

      const second = await processes.start(['worker'], env);
      const decided = await eventually(
        () => verificationOf(id),
        (verification) => verification.status !== 'pending' || second.hasExited(),
        WORKER_WAIT_MS,
      );
      expect(decided, second.stderr()).toMatchObject({ status: 'verified', decided_by: 'provider' });
      // Taken over once the lease ran out, by asking /job_status first: nothing was sent again.
      const polls = requestsFor(id, '/v1/job_status');
      expect(polls).toHaveLength(1);
      expect(polls[0]?.at.getTime()).toBeGreaterThanOrEqual(leasedUntil);
      expect(requestsFor(id, SUBMIT_PATH)).toHaveLength(1);
      expect(await jobOf(id)).toMatchObject({ state: 'decided', attempts: 2, result_code: '1012' });

      // Smile ID's callback, late, after the poll decided: stored as a duplicate, it changes nothing.
      await sim.deliverPendingCallbacks();
      const callbacks = sim.deliveries.filter((d) => d.body.includes(id));
      expect(callbacks.map((d) => d.status)).toEqual([200]);
      const stored = await t.db.store.query('SELECT outcome FROM verification_callbacks WHERE job_id = $1', [
        id,
      ]);
      expect(stored.map((r) => r.outcome)).toEqual(['duplicate']);
      expect(await verificationOf(id)).toMatchObject({ status: 'verified', decided_at: decided.decided_at });

      // The trail: one decision as evidence and as an event; the poll and the callback recorded.
      const results = await t.db.store.query(
        "SELECT payload FROM evidence_records WHERE kind = 'verification.result' AND payload LIKE '%' || $1 || '%'",
        [id],
      );
      expect(results).toHaveLength(1);
      expect(JSON.parse(String(results[0]?.payload)).data).toMatchObject({
        status: 'verified',
        decided_by: 'smile_id',
        provider_result_code: '1012',
      });
      const events = await t.db.store.query(
        "SELECT data FROM events WHERE type = 'customer.verification.updated' AND resource_id = $1",
        [id],
      );
      expect(events.filter((e) => JSON.stringify(e.data).includes('"verified"'))).toHaveLength(1);
      // The killed worker's submission was recorded before it left (calls.ts) and stays `sent`: its answer
      // was never recorded. Then the second worker's poll and the late callback.
      const calls = await callsOf(id);
      expect(calls).toEqual([
        expect.objectContaining({
          kind: 'submit',
          path: '/async_id_verification',
          outcome: 'sent',
          http_status: null,
          result_code: null,
          duration_ms: null,
          answered_at: null,
        }),
        expect.objectContaining({
          kind: 'job_status',
          outcome: 'accepted',
          result_code: '1012',
          detail: 'complete',
        }),
        expect.objectContaining({ kind: 'callback', outcome: 'accepted', detail: 'duplicate' }),
      ]);

      expect(await second.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      expect(second.stderr()).not.toMatch(/failed|error/);
    });
  },
);
