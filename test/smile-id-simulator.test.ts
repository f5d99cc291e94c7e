/**
 * The Smile ID simulator as a real HTTPS server, against Smile ID's published request shapes (plain fetch)
 * and with the unmodified `smile-identity-core` client (3.2.1) pointed at it by its base URL only: each
 * case is a row of the table in docs/rails/smile-id.md.
 */
import https from 'node:https';
import { IDApi, JOB_TYPE, Signature, Utilities } from 'smile-identity-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SMILE_ID_KYB_ID_TYPES,
  SMILE_ID_KYC_ID_TYPES,
  SMILE_ID_SIMULATOR_CERTIFICATE_PEM,
  SMILE_ID_TIMESTAMP_TOLERANCE_MS,
  type SmileIdSimulator,
  smileIdSignature,
  startSmileIdSimulator,
} from '../src/simulators/smileId/index.ts';
import { type Receiver, startReceiver } from './support/receiver.ts';

/** How long a test waits for a callback, and how often it looks. */
const CALLBACK_WAIT_MS = 3_000;
const POLL_MS = 10;

/** A well-formed number of each ID type, ending in four characters no magic number uses. */
const WELL_FORMED: Record<string, Record<string, string>> = {
  KE: {
    ALIEN_CARD: '12340000',
    KRA_PIN: '12340000',
    NATIONAL_ID: '12340000',
    NATIONAL_ID_NO_PHOTO: '12340000',
    PASSPORT: 'A12340000',
    TAX_INFORMATION: 'A123450000Z',
    BUSINESS_REGISTRATION: 'PVT-1230000',
  },
  UG: { NATIONAL_ID_NO_PHOTO: 'CM123456780000' },
  GH: {
    GHANA_CARD: 'GHA-123450000-1',
    GHANA_CARD_NO_PHOTO: 'GHA-123450000-1',
    PASSPORT: 'G1230000',
    VOTER_ID: '1234560000',
  },
  NG: {
    BANK_ACCOUNT: '1234560000',
    BVN: '12345670000',
    NIN_V2: '12345670000',
    NIN_SLIP: '12345670000',
    V_NIN: 'AB12CD3456780000',
    PHONE_NUMBER: '08012340000',
    VOTER_ID: '90F5B1234567890000',
    BUSINESS_REGISTRATION: '1230000',
    TAX_INFORMATION: '12345678-0000',
  },
};

let simulator: SmileIdSimulator;
let receiver: Receiver;
let jobCounter = 0;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const nextJobId = () => `job-${Date.now()}-${++jobCounter}`;

function signature(timestamp = new Date().toISOString(), apiKey = simulator.apiKey) {
  return {
    partner_id: simulator.partnerId,
    timestamp,
    signature: smileIdSignature(simulator.partnerId, apiKey, timestamp),
  };
}

function kycRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...signature(),
    source_sdk: 'rest_api',
    source_sdk_version: '1.0.0',
    country: 'KE',
    id_type: 'NATIONAL_ID',
    id_number: '12340000',
    first_name: 'Wanjiru',
    last_name: 'Kamau',
    dob: '1990-04-01',
    partner_params: { user_id: 'user-1', job_id: nextJobId(), job_type: 5 },
    ...overrides,
  };
}

function kybRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return kycRequest({
    country: 'NG',
    id_type: 'BUSINESS_REGISTRATION',
    id_number: '1230000',
    business_type: 'co',
    partner_params: { user_id: 'biz-1', job_id: nextJobId(), job_type: 7 },
    ...overrides,
  });
}

/** A request over Node's https (which trusts the simulator's certificate here), its JSON answer. */
function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    const request = https.request(
      `${simulator.apiUrl}${path}`,
      { method, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } },
      (response) => {
        let answer = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          answer += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(answer) }));
      },
    );
    request.on('error', reject);
    request.end(text);
  });
}

const post = (path: string, body: unknown) => call('POST', path, body);

function jobIdOf(request: Record<string, unknown>): string {
  return (request.partner_params as { job_id: string }).job_id;
}

/** The callbacks received that carry this job_id. */
function callbacksFor(jobId: string): Record<string, unknown>[] {
  return receiver.received
    .map((entry) => JSON.parse(entry.body) as Record<string, unknown>)
    .filter((body) => (body.PartnerParams as { job_id?: string } | undefined)?.job_id === jobId);
}

async function waitForCallbacks(jobId: string, count = 1): Promise<Record<string, unknown>[]> {
  const deadline = Date.now() + CALLBACK_WAIT_MS;
  while (Date.now() < deadline) {
    const found = callbacksFor(jobId);
    if (found.length >= count) return found;
    await sleep(POLL_MS);
  }
  throw new Error(`no callback for ${jobId}`);
}

function expectSignedBySmileId(body: Record<string, unknown>): void {
  expect(body.signature).toBe(
    smileIdSignature(simulator.partnerId, simulator.apiKey, body.timestamp as string),
  );
}

beforeAll(async () => {
  // The simulator speaks HTTPS (smile-identity-core rewrites every base URL to https://): this process's
  // https agent, which the client's axios uses, trusts its certificate. Nothing in the client changes.
  https.globalAgent.options.ca = [SMILE_ID_SIMULATOR_CERTIFICATE_PEM];
  simulator = await startSmileIdSimulator({ tls: true });
  receiver = await startReceiver('/smile-id/callback');
});

afterAll(async () => {
  await simulator.close();
  await receiver.close();
});

describe('Enhanced and Basic KYC, synchronous (POST /v1/id_verification)', () => {
  it('answers a found ID with 1012 and the published top-level values, signed', async () => {
    const request = kycRequest();
    const { status, body } = await post('/id_verification', request);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      ResultCode: '1012',
      ResultText: 'Valid ID',
      ResultType: 'ID Verification',
      IsFinalResult: 'true',
      Country: 'KE',
      IDType: 'NATIONAL_ID',
      IDNumber: '12340000',
      FullName: 'Wanjiru Kamau',
      PartnerParams: { user_id: 'user-1', job_id: jobIdOf(request), job_type: 5 },
      Actions: { Verify_ID_Number: 'Verified', Return_Personal_Info: 'Returned' },
    });
    expect(body.SmileJobID).toMatch(/^\d{10}$/);
    expectSignedBySmileId(body);
  });

  it.each([
    ['1013', 'Unable to Validate ID', 'Not Verified'],
    ['1015', 'Error - Queried Database Unavailable', 'Issuer Unavailable'],
    ['1016', 'Error - Need to Activate Product', 'Not Done'],
    ['1020', 'Exact Match', 'Verified'],
    ['1021', 'Partial Match', 'Verified'],
    ['1022', 'No Match', 'Verified'],
  ])('an ID number ending %s answers that result code', async (code, text, action) => {
    const { body } = await post('/id_verification', kycRequest({ id_number: `1234${code}` }));
    expect(body).toMatchObject({ ResultCode: code, ResultText: text, Actions: { Verify_ID_Number: action } });
  });

  it('names compare as the result code says (1021 partial), and are "Not Provided" when not sent', async () => {
    const partial = await post('/id_verification', kycRequest({ id_number: '12341021' }));
    expect(partial.body.Actions).toMatchObject({ Names: 'Partial Match' });
    const enhanced = await post(
      '/id_verification',
      kycRequest({ first_name: undefined, last_name: undefined }),
    );
    expect(enhanced.body.Actions).toMatchObject({ Names: 'Not Provided' });
  });

  it('a number without its ID type’s published format is 1014, whatever it ends with', async () => {
    const { status, body } = await post('/id_verification', kycRequest({ id_number: 'ABC1012' }));
    expect(status).toBe(200);
    expect(body).toMatchObject({ ResultCode: '1014', Actions: { Verify_ID_Number: 'Not Verified' } });
    expect(body.FullName).toBeUndefined();
  });

  it('takes every published ID type of Kenya, Uganda, Ghana and Nigeria', async () => {
    for (const [country, types] of Object.entries(SMILE_ID_KYC_ID_TYPES)) {
      for (const idType of Object.keys(types)) {
        const id_number = WELL_FORMED[country]?.[idType];
        const { body } = await post('/id_verification', kycRequest({ country, id_type: idType, id_number }));
        expect({ country, idType, code: body.ResultCode }).toEqual({ country, idType, code: '1012' });
      }
    }
  });

  it('refuses an ID type the country does not have with 2204', async () => {
    const { status, body } = await post(
      '/id_verification',
      kycRequest({ country: 'UG', id_type: 'NATIONAL_ID' }),
    );
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: '2204' });
    expect(String(body.error)).toContain('id_type');
  });

  it('a repeated job_id is 2215 and makes no second job', async () => {
    const request = kycRequest();
    await post('/id_verification', request);
    const again = await post('/id_verification', { ...request, ...signature() });
    expect(again).toMatchObject({ status: 400, body: { code: '2215' } });
  });
});

describe('the request signature and the fields every request shares', () => {
  it('refuses a wrong signature, an unknown partner and a stale timestamp with 2205', async () => {
    const wrongKey = await post('/id_verification', kycRequest(signature(undefined, 'not-the-key')));
    expect(wrongKey).toMatchObject({ status: 401, body: { code: '2205' } });
    const unknownPartner = await post('/id_verification', kycRequest({ partner_id: '9999' }));
    expect(unknownPartner).toMatchObject({ status: 401, body: { code: '2205' } });
    const stale = new Date(Date.now() - SMILE_ID_TIMESTAMP_TOLERANCE_MS - 60_000).toISOString();
    const old = await post('/id_verification', kycRequest(signature(stale)));
    expect(old).toMatchObject({ status: 401, body: { code: '2205' } });
  });

  it('a missing signature, timestamp or field is 2213; a timestamp that is no time is 2204', async () => {
    for (const field of [
      'signature',
      'timestamp',
      'partner_id',
      'source_sdk',
      'country',
      'id_type',
      'id_number',
    ]) {
      const { status, body } = await post('/id_verification', kycRequest({ [field]: undefined }));
      expect({ field, status, code: body.code }).toEqual({ field, status: 400, code: '2213' });
    }
    const badTime = await post('/id_verification', kycRequest({ timestamp: 'yesterday' }));
    expect(badTime.body).toMatchObject({ code: '2204' });
    const numberId = await post('/id_verification', kycRequest({ id_number: 12340000 }));
    expect(numberId.body).toMatchObject({ code: '2204' });
  });

  it('partner_params needs user_id, job_id and the endpoint’s job_type (2213, 2212)', async () => {
    expect((await post('/id_verification', kycRequest({ partner_params: undefined }))).body).toMatchObject({
      code: '2213',
    });
    const noJob = await post(
      '/id_verification',
      kycRequest({ partner_params: { user_id: 'u', job_type: 5 } }),
    );
    expect(noJob.body).toMatchObject({ code: '2213' });
    const noType = await post(
      '/id_verification',
      kycRequest({ partner_params: { user_id: 'u', job_id: nextJobId() } }),
    );
    expect(noType.body).toMatchObject({ code: '2213' });
    const kybType = kycRequest({ partner_params: { user_id: 'u', job_id: nextJobId(), job_type: 7 } });
    expect((await post('/id_verification', kybType)).body).toMatchObject({ code: '2212' });
  });

  it('a body that is not a JSON object is 2203; an unknown path 404; GET on a lookup 405', async () => {
    expect(await post('/id_verification', '{not json')).toMatchObject({
      status: 400,
      body: { code: '2203' },
    });
    expect(await post('/id_verification', '[1]')).toMatchObject({ status: 400, body: { code: '2203' } });
    expect((await post('/nowhere', {})).status).toBe(404);
    expect((await call('GET', '/id_verification')).status).toBe(405);
  });

  it('a forced failure answers the system error 2201 with the status asked for', async () => {
    simulator.failNext(1, 503);
    expect(await post('/id_verification', kycRequest())).toMatchObject({
      status: 503,
      body: { code: '2201' },
    });
    expect((await post('/id_verification', kycRequest())).status).toBe(200);
  });
});

describe('asynchronous lookups and their signed callbacks', () => {
  it('acknowledges with success and smile_job_id, then POSTs the result, signed, to callback_url', async () => {
    const request = kycRequest({ callback_url: receiver.url });
    const { status, body } = await post('/async_id_verification', request);
    expect(status).toBe(200);
    expect(body).toEqual({ success: true, smile_job_id: expect.stringMatching(/^\d{10}$/) });
    const [callback] = await waitForCallbacks(jobIdOf(request));
    expect(callback).toMatchObject({ ResultCode: '1012', SmileJobID: body.smile_job_id });
    expectSignedBySmileId(callback as Record<string, unknown>);
  });

  it('callback_url is required (2213) and must be a URL (2204)', async () => {
    expect((await post('/async_id_verification', kycRequest())).body).toMatchObject({ code: '2213' });
    const notUrl = await post('/async_id_verification', kycRequest({ callback_url: 'not a url' }));
    expect(notUrl.body).toMatchObject({ code: '2204' });
  });

  it('9001 calls back late (held until the late delay); 9003 calls back twice', async () => {
    const late = kycRequest({ callback_url: receiver.url, id_number: '12349001' });
    await post('/async_id_verification', late);
    await sleep(100);
    expect(callbacksFor(jobIdOf(late))).toHaveLength(0);
    await simulator.deliverPendingCallbacks();
    expect(callbacksFor(jobIdOf(late))).toHaveLength(1);
    const twice = kycRequest({ callback_url: receiver.url, id_number: '12349003' });
    await post('/async_id_verification', twice);
    const both = await waitForCallbacks(jobIdOf(twice), 2);
    expect(both[0]?.SmileJobID).toBe(both[1]?.SmileJobID);
  });

  it('9002 never calls back: only /job_status tells the result', async () => {
    const request = kycRequest({ callback_url: receiver.url, id_number: '12349002' });
    await post('/async_id_verification', request);
    await simulator.deliverPendingCallbacks();
    expect(callbacksFor(jobIdOf(request))).toHaveLength(0);
    const { body } = await post('/job_status', {
      ...signature(),
      user_id: 'user-1',
      job_id: jobIdOf(request),
    });
    expect(body).toMatchObject({ job_complete: true, job_success: true, result: { ResultCode: '1012' } });
  });
});

describe('Business Verification (KYB, job_type 7)', () => {
  it('answers a Nigerian registration number with 1012 and the company information', async () => {
    const { status, body } = await post('/business_verification', kybRequest());
    expect(status).toBe(200);
    expect(body).toMatchObject({
      ResultCode: '1012',
      ResultText: 'Business Verified',
      ResultType: 'Business Verification',
      Actions: { Verify_Business: 'Verified', Return_Business_Info: 'Returned' },
      company_information: { registration_number: '1230000', country: 'NG' },
      directors: [],
      beneficial_owners: [],
    });
    expectSignedBySmileId(body);
  });

  it('searches every published registry of Kenya and Nigeria; Uganda and Ghana have none (2204)', async () => {
    for (const [country, types] of Object.entries(SMILE_ID_KYB_ID_TYPES)) {
      for (const idType of Object.keys(types)) {
        const id_number = WELL_FORMED[country]?.[idType];
        const { body } = await post(
          '/business_verification',
          kybRequest({ country, id_type: idType, id_number }),
        );
        expect({ country, idType, code: body.ResultCode }).toEqual({ country, idType, code: '1012' });
      }
    }
    for (const country of ['UG', 'GH']) {
      const { body } = await post('/business_verification', kybRequest({ country }));
      expect(body).toMatchObject({ code: '2204' });
    }
  });

  it('Nigeria’s registry needs business_type bn, co or it (2213, 2204); 1013 is not found', async () => {
    expect(
      (await post('/business_verification', kybRequest({ business_type: undefined }))).body,
    ).toMatchObject({
      code: '2213',
    });
    expect((await post('/business_verification', kybRequest({ business_type: 'llc' }))).body).toMatchObject({
      code: '2204',
    });
    const missing = await post('/business_verification', kybRequest({ id_number: '1231013' }));
    expect(missing.body).toMatchObject({
      ResultCode: '1013',
      Actions: { Return_Business_Info: 'Not Returned' },
    });
    expect(missing.body.company_information).toBeUndefined();
  });

  it('a KYC job_type on the business endpoint is 2212', async () => {
    const request = kybRequest({ partner_params: { user_id: 'b', job_id: nextJobId(), job_type: 5 } });
    expect((await post('/business_verification', request)).body).toMatchObject({ code: '2212' });
  });

  it('the async endpoint acknowledges and calls back, signed', async () => {
    const request = kybRequest({ callback_url: receiver.url });
    const ack = await post('/async_business_verification', request);
    expect(ack.body).toMatchObject({ success: true });
    const [callback] = await waitForCallbacks(jobIdOf(request));
    expect(callback).toMatchObject({ ResultCode: '1012', ResultType: 'Business Verification' });
    expectSignedBySmileId(callback as Record<string, unknown>);
  });
});

describe('POST /v1/job_status and GET /v1/services', () => {
  it('answers job_complete, job_success, result and history, signed; the request signature is checked', async () => {
    const request = kycRequest({ id_number: '12341022' });
    await post('/id_verification', request);
    const query = { user_id: 'user-1', job_id: jobIdOf(request), history: true, image_links: false };
    const { status, body } = await post('/job_status', { ...signature(), ...query });
    expect(status).toBe(200);
    expect(body).toMatchObject({ job_complete: true, job_success: false, result: { ResultCode: '1022' } });
    expect(body.history).toHaveLength(1);
    expectSignedBySmileId(body);
    const refused = await post('/job_status', { ...signature(undefined, 'wrong'), ...query });
    expect(refused).toMatchObject({ status: 401, body: { code: '2205' } });
  });

  it('a job in progress (9004) is job_complete false until it completes; an unknown job is 404', async () => {
    const request = kycRequest({ callback_url: receiver.url, id_number: '12349004' });
    await post('/async_id_verification', request);
    const query = () => ({ ...signature(), user_id: 'user-1', job_id: jobIdOf(request) });
    expect((await post('/job_status', query())).body).toMatchObject({
      job_complete: false,
      job_success: false,
    });
    simulator.completeJob(jobIdOf(request));
    expect((await post('/job_status', query())).body).toMatchObject({
      job_complete: true,
      job_success: true,
    });
    const unknown = await post('/job_status', { ...signature(), user_id: 'user-1', job_id: 'no-such-job' });
    expect(unknown.status).toBe(404);
    const otherUser = await post('/job_status', {
      ...signature(),
      user_id: 'someone',
      job_id: jobIdOf(request),
    });
    expect(otherUser.status).toBe(404);
  });

  it('lists the ID types per country', async () => {
    const { status, body } = await call('GET', '/services');
    expect(status).toBe(200);
    expect(body.id_types).toMatchObject({
      KE: expect.arrayContaining(['NATIONAL_ID']),
      UG: ['NATIONAL_ID_NO_PHOTO'],
    });
    expect(body.business_verification).toMatchObject({ NG: ['BUSINESS_REGISTRATION', 'TAX_INFORMATION'] });
  });
});

describe('the unmodified smile-identity-core client (3.2.1), given the simulator as its server', () => {
  const server = () => simulator.apiUrl;

  it('IDApi.submit_job: Enhanced KYC and Business Verification', async () => {
    const api = new IDApi(simulator.partnerId, simulator.apiKey, server());
    const kyc = (await api.submit_job(
      { user_id: 'client-user', job_id: nextJobId(), job_type: JOB_TYPE.ENHANCED_KYC },
      {
        country: 'GH',
        id_type: 'GHANA_CARD',
        id_number: 'GHA-123451021-1',
        first_name: 'Ama',
        last_name: 'Mensah',
      },
    )) as Record<string, unknown>;
    expect(kyc).toMatchObject({ ResultCode: '1021', IDType: 'GHANA_CARD' });
    const kyb = (await api.submit_job(
      { user_id: 'client-biz', job_id: nextJobId(), job_type: JOB_TYPE.BUSINESS_VERIFICATION },
      { country: 'KE', id_type: 'BUSINESS_REGISTRATION', id_number: 'PVT-1230000' },
    )) as Record<string, unknown>;
    expect(kyb).toMatchObject({ ResultCode: '1012', ResultType: 'Business Verification' });
  });

  it('IDApi.submitAsyncjob, the callback confirmed with Signature.confirm_signature, then get_job_status', async () => {
    const api = new IDApi(simulator.partnerId, simulator.apiKey, server());
    const jobId = nextJobId();
    const ack = (await api.submitAsyncjob(
      { user_id: 'client-user', job_id: jobId, job_type: JOB_TYPE.BASIC_KYC },
      { country: 'NG', id_type: 'BVN', id_number: '12345670000' },
      receiver.url,
    )) as Record<string, unknown>;
    expect(ack).toMatchObject({ success: true });
    const [callback] = await waitForCallbacks(jobId);
    const signer = new Signature(simulator.partnerId, simulator.apiKey);
    expect(signer.confirm_signature(callback?.timestamp as string, callback?.signature as string)).toBe(true);
    // get_job_status throws unless the answer's own signature confirms.
    const status = (await new Utilities(simulator.partnerId, simulator.apiKey, server()).get_job_status(
      'client-user',
      jobId,
      { return_history: true, return_images: false },
    )) as Record<string, unknown>;
    expect(status).toMatchObject({ job_complete: true, job_success: true, result: { ResultCode: '1012' } });
  });

  it('IDApi.pollJobStatus reads the result of a job whose callback never comes', async () => {
    const api = new IDApi(simulator.partnerId, simulator.apiKey, server());
    const params = { user_id: 'client-user', job_id: nextJobId(), job_type: JOB_TYPE.ENHANCED_KYC };
    await api.submitAsyncjob(
      params,
      { country: 'UG', id_type: 'NATIONAL_ID_NO_PHOTO', id_number: 'CM123456789002' },
      receiver.url,
    );
    const status = (await api.pollJobStatus(params, 1, 10)) as Record<string, unknown>;
    expect(status).toMatchObject({ job_complete: true, result: { ResultCode: '1012' } });
  });

  it('a wrong api key is refused with 2205, as axios reports it', async () => {
    const api = new IDApi(simulator.partnerId, 'not-the-key', server());
    const refused = api.submit_job(
      { user_id: 'client-user', job_id: nextJobId(), job_type: JOB_TYPE.ENHANCED_KYC },
      { country: 'KE', id_type: 'NATIONAL_ID', id_number: '12340000' },
    );
    await expect(refused).rejects.toMatchObject({ response: { status: 401, data: { code: '2205' } } });
  });
});
