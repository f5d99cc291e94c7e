/**
 * Every call to Smile ID and every callback from it, recorded one by one and listed for operators at
 * `GET /v1/verification-provider-calls`: submissions, `/job_status` polls, callbacks (applied, duplicate,
 * forged), an outage; each with its kind, job, verification, HTTP status, code, outcome and duration, and
 * never the ID number, names, signature or key.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSmileIdJobsOnce, SMILE_ID_POLL_AFTER_MS } from '../src/modules/compliance/index.ts';
import { findSmileIdConfig } from '../src/modules/compliance/repository/smileId.ts';
import { smileIdCallEnding, submitVerdict } from '../src/modules/compliance/useCases/smileId/calls.ts';
import { BlockedAddressError } from '../src/outbound/guard.ts';
import { outboundFailureOf } from '../src/outbound/recordedFetch.ts';
import { api, BACKENDS } from './support/harness.ts';
import { newOrganization } from './support/organizations.ts';
import {
  eventually,
  type SmileIdSetup,
  smileIdConfiguration,
  startSmileIdSetup,
  submitKyc,
} from './support/smileId.ts';

describe.each(BACKENDS)('Smile ID calls and callbacks, recorded on %s', (backend) => {
  let s: SmileIdSetup;
  let officer: string;

  beforeAll(async () => {
    s = await startSmileIdSetup(backend);
    officer = (await s.org.member(['compliance'])).key;
  });
  afterAll(async () => {
    await s?.close();
  });

  async function callsOf(verification: string) {
    const page = await api(s.t, 'GET', `/v1/verification-provider-calls?verification=${verification}`, {
      key: officer,
    });
    expect(page.statusCode, page.body).toBe(200);
    // Oldest first, to read as a story.
    return (page.data.data as Record<string, unknown>[]).reverse();
  }

  it('records the submission, the poll and each callback, with codes and outcomes', async () => {
    const silent = await submitKyc(s.t, s.org.key, '27009002');
    const twice = await submitKyc(s.t, s.org.key, '27009003');
    await runSmileIdJobsOnce(s.t.deps);
    await eventually(async () => (await callsOf(twice)).length >= 3, 'both callbacks');
    expect(await callsOf(twice)).toEqual([
      expect.objectContaining({ kind: 'submit', outcome: 'accepted', http_status: 200 }),
      expect.objectContaining({
        kind: 'callback',
        outcome: 'accepted',
        result_code: '1012',
        detail: 'applied',
      }),
      expect.objectContaining({
        kind: 'callback',
        outcome: 'accepted',
        detail: 'duplicate',
        http_status: 200,
      }),
    ]);
    await runSmileIdJobsOnce(s.t.deps, new Date(Date.now() + SMILE_ID_POLL_AFTER_MS + 1_000));
    const calls = await callsOf(silent);
    expect(calls).toEqual([
      {
        object: 'verification_provider_call',
        id: expect.stringMatching(/^vpc_/),
        provider: 'smile_id',
        kind: 'submit',
        path: '/async_id_verification',
        job_id: silent,
        verification: silent,
        http_status: 200,
        result_code: null,
        outcome: 'accepted',
        detail: null,
        duration_ms: expect.any(Number),
        at: expect.any(String),
        answered_at: expect.any(String),
      },
      expect.objectContaining({
        kind: 'job_status',
        path: '/job_status',
        http_status: 200,
        result_code: '1012',
        outcome: 'accepted',
        detail: 'complete',
      }),
    ]);
  });

  it('records a call `sent` before its request leaves, and completes it with the answer', async () => {
    // A Smile ID that holds each request until the test lets it answer 503.
    const held: http.ServerResponse[] = [];
    const holding = http.createServer((request, response) => {
      request.resume();
      request.on('end', () => held.push(response));
    });
    await new Promise<void>((resolve) => holding.listen(0, '127.0.0.1', resolve));
    try {
      const other = await newOrganization(s.t);
      const configured = await api(s.t, 'PUT', '/v1/verification_provider', {
        key: other.key,
        body: {
          ...smileIdConfiguration(s.simulator),
          settings: {
            base_url: `http://127.0.0.1:${(holding.address() as AddressInfo).port}/v1`,
            partner_id: s.simulator.partnerId,
          },
        },
      });
      expect(configured.statusCode, configured.body).toBe(200);
      const id = await submitKyc(s.t, other.key, '27005201');
      const pass = runSmileIdJobsOnce(s.t.deps);
      await eventually(async () => held.length === 1, 'the request to arrive');
      const inFlight = await s.t.deps.store.query(
        'SELECT kind, outcome, http_status, duration_ms, answered_at FROM verification_provider_calls WHERE verification_id = $1',
        [id],
      );
      expect(inFlight).toEqual([
        { kind: 'submit', outcome: 'sent', http_status: null, duration_ms: null, answered_at: null },
      ]);
      held[0]?.writeHead(503).end();
      await pass;
      const officerOfOther = (await other.member(['compliance'])).key;
      const listed = await api(s.t, 'GET', `/v1/verification-provider-calls?verification=${id}`, {
        key: officerOfOther,
      });
      expect(listed.data.data).toEqual([
        expect.objectContaining({
          kind: 'submit',
          outcome: 'error',
          http_status: 503,
          detail: 'unavailable',
          duration_ms: expect.any(Number),
          answered_at: expect.any(String),
        }),
      ]);
      const sent = await api(s.t, 'GET', '/v1/verification-provider-calls?outcome=sent', {
        key: officerOfOther,
      });
      expect(sent.statusCode, sent.body).toBe(200);
      expect(sent.data.data).toEqual([]);
    } finally {
      for (const response of held) if (!response.writableEnded) response.writeHead(503).end();
      await new Promise((resolve) => holding.close(resolve));
    }
  });

  it('records an outage as an error with Smile ID’s status, and a forged callback as refused', async () => {
    const id = await submitKyc(s.t, s.org.key, '27009004');
    s.simulator.failNext(1, 503);
    await runSmileIdJobsOnce(s.t.deps);
    const config = await findSmileIdConfig(s.t.deps.store, s.org.organizationId);
    const forged = await api(s.t, 'POST', `/v1/verification_provider/callbacks/${config?.callbackToken}`, {
      key: null,
      body: {
        ResultCode: '1012',
        PartnerParams: { job_id: id, user_id: 'x', job_type: 5 },
        timestamp: new Date().toISOString(),
        signature: Buffer.from('not the signature').toString('base64'),
      },
    });
    expect(forged.statusCode).toBe(400);
    expect(await callsOf(id)).toEqual([
      expect.objectContaining({ kind: 'submit', outcome: 'error', http_status: 503, detail: 'unavailable' }),
      expect.objectContaining({
        kind: 'callback',
        outcome: 'refused',
        http_status: 400,
        detail: 'bad_signature',
      }),
    ]);
  });

  it('keeps no personal data, signature or key, and is for operators', async () => {
    const id = await submitKyc(s.t, s.org.key, '27001013');
    await runSmileIdJobsOnce(s.t.deps);
    await eventually(async () => (await callsOf(id)).length >= 2, 'the callback');
    const rows = await s.t.deps.store.query('SELECT * FROM verification_provider_calls');
    const stored = JSON.stringify(rows);
    for (const secret of ['27001013', 'Neema', 'Mwangi', '1991-03-09', '+254711555666', s.simulator.apiKey]) {
      expect(stored).not.toContain(secret);
    }
    expect(Object.keys(rows[0] ?? {})).not.toContain('signature');
    const byKind = await api(s.t, 'GET', '/v1/verification-provider-calls?kind=callback&outcome=accepted', {
      key: officer,
    });
    expect(byKind.data.data.length).toBeGreaterThan(0);
    expect(byKind.data.data.every((c: { kind: string }) => c.kind === 'callback')).toBe(true);
    const writer = await s.org.member(['initiator', 'admin']);
    const refused = await api(s.t, 'GET', '/v1/verification-provider-calls', { key: writer.key });
    expect(refused.statusCode).toBe(403);
  });
});

describe('a call that got no answer from Smile ID', () => {
  const ending = (error: Error) =>
    smileIdCallEnding({ answered: false, failure: outboundFailureOf(error), durationMs: 1 }, submitVerdict);

  it('is a timeout when its own time limit aborted it, an error otherwise', () => {
    const aborted = Object.assign(new Error('aborted'), { name: 'AbortError' });
    expect(ending(aborted)).toMatchObject({ outcome: 'timeout' });
    expect(ending(new BlockedAddressError('no'))).toMatchObject({
      outcome: 'error',
      detail: 'blocked_address',
    });
    expect(ending(new Error('ECONNREFUSED'))).toMatchObject({
      outcome: 'error',
      detail: 'no_connection',
    });
  });

  it('an answer that is not Smile ID’s (a 5xx, no JSON) is an error: unavailable', () => {
    const answered = (status: number, body: Record<string, unknown> | undefined) =>
      smileIdCallEnding({ answered: true, status, body, durationMs: 1 }, submitVerdict);
    expect(answered(502, { success: true })).toMatchObject({
      outcome: 'error',
      httpStatus: 502,
      detail: 'unavailable',
    });
    expect(answered(200, undefined)).toMatchObject({
      outcome: 'error',
      httpStatus: 200,
      detail: 'unavailable',
    });
    expect(answered(400, { code: '2215' })).toMatchObject({ outcome: 'refused', resultCode: '2215' });
  });
});
