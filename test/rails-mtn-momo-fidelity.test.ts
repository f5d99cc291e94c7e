/**
 * The MoMo simulator against MTN's published pages, row by row of docs/rails/mtn-momo.md: raw HTTP as any
 * client would send it (no adapter), so each published field, route and error is checked as MTN gives it.
 */

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MomoSimulator, startMomoSimulator } from '../src/simulators/mtnMomo/index.ts';

type Product = 'collection' | 'disbursement';

const PATH: Record<Product, string> = {
  collection: '/collection/v1_0/requesttopay',
  disbursement: '/disbursement/v1_0/transfer',
};
const PARTY: Record<Product, 'payer' | 'payee'> = { collection: 'payer', disbursement: 'payee' };

let uganda: MomoSimulator;
let sandbox: MomoSimulator;

beforeAll(async () => {
  uganda = await startMomoSimulator({ processingMs: 10 });
  sandbox = await startMomoSimulator({ targetEnvironment: 'sandbox', processingMs: 10 });
});

afterAll(async () => {
  await uganda?.close();
  await sandbox?.close();
});

function subscriptionKey(sim: MomoSimulator, product: Product): string {
  return product === 'collection'
    ? sim.credentials.collectionSubscriptionKey
    : sim.credentials.disbursementSubscriptionKey;
}

function basic(sim: MomoSimulator): string {
  const { apiUser, apiKey } = sim.credentials;
  return `Basic ${Buffer.from(`${apiUser}:${apiKey}`).toString('base64')}`;
}

async function answerOf(response: Response): Promise<{ status: number; body: unknown }> {
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

async function tokenRequest(sim: MomoSimulator, product: Product, body?: string) {
  return answerOf(
    await fetch(`${sim.url}/${product}/token/`, {
      method: 'POST',
      headers: { Authorization: basic(sim), 'Ocp-Apim-Subscription-Key': subscriptionKey(sim, product) },
      ...(body === undefined ? {} : { body }),
    }),
  );
}

async function bearer(sim: MomoSimulator, product: Product): Promise<string> {
  const answer = await tokenRequest(sim, product);
  return `Bearer ${(answer.body as { access_token: string }).access_token}`;
}

/** Product API headers, as MTN's reference lists them. */
async function apiHeaders(sim: MomoSimulator, product: Product): Promise<Record<string, string>> {
  return {
    Authorization: await bearer(sim, product),
    'X-Target-Environment': sim.credentials.targetEnvironment,
    'Ocp-Apim-Subscription-Key': subscriptionKey(sim, product),
  };
}

/** A request-to-pay or transfer body, with overrides. */
function requestBody(product: Product, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    amount: '100',
    currency: 'UGX',
    externalId: `ext_${randomUUID()}`,
    [PARTY[product]]: { partyIdType: 'MSISDN', partyId: '256770000000' },
    payerMessage: 'Invoice 12',
    payeeNote: 'Invoice 12',
    ...overrides,
  };
}

/** POSTs a request-to-pay or transfer under a new X-Reference-Id, with any headers over the usual ones. */
async function create(
  sim: MomoSimulator,
  product: Product,
  body: Record<string, unknown>,
  extraHeaders: Record<string, string> = {},
) {
  const referenceId = randomUUID();
  const answer = await answerOf(
    await fetch(`${sim.url}${PATH[product]}`, {
      method: 'POST',
      headers: {
        ...(await apiHeaders(sim, product)),
        'X-Reference-Id': referenceId,
        'Content-Type': 'application/json',
        ...extraHeaders,
      },
      body: JSON.stringify(body),
    }),
  );
  return { ...answer, referenceId };
}

async function read(sim: MomoSimulator, path: string, product: Product) {
  return answerOf(await fetch(`${sim.url}${path}`, { headers: await apiHeaders(sim, product) }));
}

describe('currency: the target environment currency', () => {
  it('takes only EUR in the sandbox, only UGX in MTN Uganda; others are 500 INVALID_CURRENCY', async () => {
    for (const product of ['collection', 'disbursement'] as const) {
      const sandboxEur = await create(sandbox, product, requestBody(product, { currency: 'EUR' }));
      expect(sandboxEur.status).toBe(202);
      const sandboxUgx = await create(sandbox, product, requestBody(product, { currency: 'UGX' }));
      expect(sandboxUgx).toMatchObject({ status: 500, body: { code: 'INVALID_CURRENCY' } });
      expect((await read(sandbox, `${PATH[product]}/${sandboxUgx.referenceId}`, product)).status).toBe(404);
      expect((await create(uganda, product, requestBody(product))).status).toBe(202);
      const ugandaEur = await create(uganda, product, requestBody(product, { currency: 'EUR' }));
      expect(ugandaEur).toMatchObject({ status: 500, body: { code: 'INVALID_CURRENCY' } });
    }
  });

  it('takes the currencies it is given over its environment', async () => {
    const both = await startMomoSimulator({ targetEnvironment: 'sandbox', currencies: ['EUR', 'UGX'] });
    try {
      expect((await create(both, 'disbursement', requestBody('disbursement'))).status).toBe(202);
    } finally {
      await both.close();
    }
  });
});

describe('notes: payerMessage and payeeNote', () => {
  it('refuses an apostrophe and more than 160 characters with 400; other punctuation passes', async () => {
    for (const product of ['collection', 'disbursement'] as const) {
      for (const field of ['payerMessage', 'payeeNote']) {
        const apostrophe = await create(uganda, product, requestBody(product, { [field]: "Kato's shop" }));
        expect(apostrophe.status, `${product} ${field}`).toBe(400);
        const long = await create(uganda, product, requestBody(product, { [field]: 'x'.repeat(161) }));
        expect(long.status).toBe(400);
        const longest = await create(uganda, product, requestBody(product, { [field]: 'x'.repeat(160) }));
        expect(longest.status).toBe(202);
        const marks = await create(
          uganda,
          product,
          requestBody(product, { [field]: 'Order #12 & co! (50%)' }),
        );
        expect(marks.status).toBe(202);
      }
    }
  });
});

describe('token: POST /{product}/token/', () => {
  it('refuses a body with 400, and gives a token without one', async () => {
    expect(await tokenRequest(uganda, 'collection', '{"grant_type":"client_credentials"}')).toMatchObject({
      status: 400,
    });
    expect(await tokenRequest(uganda, 'disbursement', '{}')).toMatchObject({ status: 400 });
    expect(await tokenRequest(uganda, 'collection')).toMatchObject({
      status: 200,
      body: { token_type: 'access_token', expires_in: 3600 },
    });
    expect(await tokenRequest(uganda, 'collection', '')).toMatchObject({ status: 200 });
  });
});

describe('party: partyIdType MSISDN, EMAIL or PARTY_CODE', () => {
  it('takes each type in its own form, and answers it back on GET', async () => {
    for (const product of ['collection', 'disbursement'] as const) {
      for (const party of [
        { partyIdType: 'MSISDN', partyId: '256770000000' },
        { partyIdType: 'EMAIL', partyId: 'kato@example.ug' },
        { partyIdType: 'PARTY_CODE', partyId: randomUUID() },
      ]) {
        const created = await create(uganda, product, requestBody(product, { [PARTY[product]]: party }));
        expect(created.status, JSON.stringify(party)).toBe(202);
        const got = await read(uganda, `${PATH[product]}/${created.referenceId}`, product);
        expect(got.body).toMatchObject({ [PARTY[product]]: party });
      }
    }
  });

  it("refuses an id not in its type's form with the not-found code, and an unknown type with 400", async () => {
    const notFound = { collection: 'PAYER_NOT_FOUND', disbursement: 'PAYEE_NOT_FOUND' } as const;
    for (const product of ['collection', 'disbursement'] as const) {
      for (const party of [
        { partyIdType: 'MSISDN', partyId: 'kato@example.ug' },
        { partyIdType: 'EMAIL', partyId: '256770000000' },
        { partyIdType: 'EMAIL', partyId: 'kato at example.ug' },
        { partyIdType: 'PARTY_CODE', partyId: 'kato' },
      ]) {
        const refused = await create(uganda, product, requestBody(product, { [PARTY[product]]: party }));
        expect(refused, JSON.stringify(party)).toMatchObject({
          status: 400,
          body: { code: notFound[product] },
        });
      }
      for (const party of [
        { partyIdType: 'msisdn', partyId: '256770000000' },
        { partyIdType: 'ALIAS', partyId: 'kato' },
        { partyIdType: 'MSISDN', partyId: 256770000000 },
      ]) {
        const refused = await create(uganda, product, requestBody(product, { [PARTY[product]]: party }));
        expect(refused.status, JSON.stringify(party)).toBe(400);
        expect((refused.body as { code?: string }).code).toBeUndefined();
      }
    }
  });
});

describe('account balance: GET /{product}/v1_0/account/balance', () => {
  it("answers each product account's available balance in the environment's currency", async () => {
    for (const product of ['collection', 'disbursement'] as const) {
      expect(await read(uganda, `/${product}/v1_0/account/balance`, product)).toEqual({
        status: 200,
        body: { availableBalance: '1000000', currency: 'UGX' },
      });
      expect(await read(sandbox, `/${product}/v1_0/account/balance`, product)).toMatchObject({
        body: { currency: 'EUR' },
      });
    }
    const changed = await startMomoSimulator({ balances: { disbursement: '0' } });
    try {
      expect(await read(changed, '/disbursement/v1_0/account/balance', 'disbursement')).toMatchObject({
        body: { availableBalance: '0' },
      });
      changed.setBalance('collection', '-25.5');
      expect(await read(changed, '/collection/v1_0/account/balance', 'collection')).toMatchObject({
        body: { availableBalance: '-25.5' },
      });
    } finally {
      await changed.close();
    }
  });

  it('asks for the bearer token and target environment as every product API does', async () => {
    const path = '/disbursement/v1_0/account/balance';
    const headers = await apiHeaders(uganda, 'disbursement');
    const noToken = await fetch(`${uganda.url}${path}`, { headers: { ...headers, Authorization: '' } });
    expect(noToken.status).toBe(401);
    const collectionToken = await fetch(`${uganda.url}${path}`, {
      headers: { ...headers, Authorization: await bearer(uganda, 'collection') },
    });
    expect(collectionToken.status).toBe(401);
    const wrongEnvironment = await answerOf(
      await fetch(`${uganda.url}${path}`, { headers: { ...headers, 'X-Target-Environment': 'sandbox' } }),
    );
    expect(wrongEnvironment).toMatchObject({ status: 500, body: { code: 'NOT_ALLOWED_TARGET_ENVIRONMENT' } });
  });
});

describe('account holder: GET /{product}/v1_0/accountholder/{accountHolderIdType}/{accountHolderId}/active', () => {
  const active = (sim: MomoSimulator, product: Product, type: string, id: string) =>
    read(sim, `/${product}/v1_0/accountholder/${type}/${encodeURIComponent(id)}/active`, product);

  it('answers {result}: true for an account holder, false for our inactive number', async () => {
    for (const product of ['collection', 'disbursement'] as const) {
      expect(await active(uganda, product, 'msisdn', '256770000000')).toEqual({
        status: 200,
        body: { result: true },
      });
      expect(await active(uganda, product, 'msisdn', '256770000016')).toEqual({
        status: 200,
        body: { result: false },
      });
      expect(await active(uganda, product, 'email', 'kato@example.ug')).toMatchObject({
        body: { result: true },
      });
      expect(await active(uganda, product, 'party_code', randomUUID())).toMatchObject({
        body: { result: true },
      });
    }
  });

  it("answers MTN's sandbox test account holders as its Sandbox Use Cases page names them", async () => {
    const cases: Array<[string, string, { status: number; body: unknown }]> = [];
    const answers = {
      NotFound: { status: 200, body: { result: false } },
      NotActive: { status: 200, body: { result: false } },
      NotAllowed: { status: 500, body: { code: 'NOT_ALLOWED' } },
      NotAllowedTargetEnvironment: { status: 500, body: { code: 'NOT_ALLOWED_TARGET_ENVIRONMENT' } },
      InternalProcessingError: { status: 500, body: { code: 'INTERNAL_PROCESSING_ERROR' } },
      ServiceUnavailable: { status: 503, body: { code: 'SERVICE_UNAVAILABLE' } },
    };
    const numbers = ['NotFound', 'NotActive', 'NotAllowed', 'NotAllowedTargetEnvironment'] as const;
    const more = ['InternalProcessingError', 'ServiceUnavailable'] as const;
    [...numbers, ...more].forEach((name, index) => {
      cases.push(['msisdn', `4673312345${index}`, answers[name]]);
      cases.push(['email', `${name.toLowerCase()}@email.com`, answers[name]]);
    });
    cases.push(['party_code', '5cecb5a7-8bd0-4f49-87b1-8eb9ecc7b7bc', answers.NotFound]);
    cases.push(['party_code', 'b0040b3c-b426-4a90-af6e-673e65861cd7', answers.NotActive]);
    cases.push(['party_code', '4d5f500f-c385-4901-9be5-25b6d36ad220', answers.NotAllowed]);
    cases.push(['party_code', 'd2265f9b-0c22-496d-908f-79a65ad66266', answers.NotAllowedTargetEnvironment]);
    cases.push(['party_code', '8f548a78-ceb8-4d12-a243-5640b91e91a4', answers.InternalProcessingError]);
    cases.push(['party_code', '585c07a4-2c80-42f7-9e73-e586b36dee68', answers.ServiceUnavailable]);
    for (const [type, id, expected] of cases) {
      expect(await active(sandbox, 'collection', type, id), `${type} ${id}`).toMatchObject(expected);
    }
  });

  it('refuses an id type not MTN’s, and an id not of its type, with 400; takes a type in capitals', async () => {
    expect(await active(uganda, 'disbursement', 'MSISDN', '256770000000')).toMatchObject({
      body: { result: true },
    });
    const refused = 'alias:kato msisdn:kato email:256770000000 party_code:not-a-uuid';
    for (const pair of refused.split(' ')) {
      const [type = '', id = ''] = pair.split(':');
      expect((await active(uganda, 'disbursement', type, id)).status, pair).toBe(400);
    }
    const malformed = await fetch(`${uganda.url}/collection/v1_0/accountholder/msisdn/%zz/active`, {
      headers: await apiHeaders(uganda, 'collection'),
    });
    expect(malformed.status).toBe(404);
  });
});

describe('sandbox provisioning: /v1_0/apiuser', () => {
  const provision = (
    path: string,
    init: { method?: string; headers?: Record<string, string>; body?: string },
  ) =>
    fetch(`${sandbox.url}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        'Ocp-Apim-Subscription-Key': sandbox.credentials.collectionSubscriptionKey,
        ...init.headers,
      },
      ...(init.body === undefined ? {} : { body: init.body }),
    }).then(answerOf);
  const createUser = (userId: string, body = '{"providerCallbackHost": "callbacks.example.com"}') =>
    provision('/v1_0/apiuser', {
      method: 'POST',
      headers: { 'X-Reference-Id': userId, 'Content-Type': 'application/json' },
      body,
    });

  it('makes an API user, reads it back, gives it a key that buys tokens; a new key replaces the old', async () => {
    const userId = randomUUID();
    expect(await createUser(userId)).toEqual({ status: 201, body: undefined });
    expect(await provision(`/v1_0/apiuser/${userId}`, {})).toEqual({
      status: 200,
      body: { providerCallbackHost: 'callbacks.example.com', targetEnvironment: 'sandbox' },
    });
    const first = await provision(`/v1_0/apiuser/${userId}/apikey`, { method: 'POST' });
    expect(first).toMatchObject({ status: 201, body: { apiKey: expect.stringMatching(/^[0-9a-f]{32}$/) } });
    const tokenWith = (apiKey: string) =>
      fetch(`${sandbox.url}/disbursement/token/`, {
        method: 'POST',
        headers: {
          Authorization: `Basic ${Buffer.from(`${userId}:${apiKey}`).toString('base64')}`,
          'Ocp-Apim-Subscription-Key': sandbox.credentials.disbursementSubscriptionKey,
        },
      }).then(answerOf);
    const firstKey = (first.body as { apiKey: string }).apiKey;
    expect(await tokenWith(firstKey)).toMatchObject({ status: 200, body: { token_type: 'access_token' } });
    const second = await provision(`/v1_0/apiuser/${userId}/apikey`, {
      method: 'POST',
      headers: { 'Ocp-Apim-Subscription-Key': sandbox.credentials.disbursementSubscriptionKey },
    });
    const secondKey = (second.body as { apiKey: string }).apiKey;
    expect(secondKey).not.toBe(firstKey);
    expect(await tokenWith(firstKey)).toEqual({ status: 401, body: { error: 'login_failed' } });
    expect(await tokenWith(secondKey)).toMatchObject({ status: 200 });
  });

  it("answers MTN's errors: 409 for a used id, 400 for a bad one or body, 404 for an unknown user, 401 for a key", async () => {
    const userId = randomUUID();
    expect((await createUser(userId)).status).toBe(201);
    expect(await createUser(userId)).toMatchObject({ status: 409, body: { code: 'RESOURCE_ALREADY_EXIST' } });
    expect(await createUser(sandbox.credentials.apiUser)).toMatchObject({ status: 409 });
    expect((await createUser('not-a-uuid')).status).toBe(400);
    expect((await createUser(randomUUID(), '{}')).status).toBe(400);
    expect((await createUser(randomUUID(), 'not json')).status).toBe(400);
    expect((await createUser(randomUUID(), '{"providerCallbackHost": 42}')).status).toBe(400);
    const unknown = randomUUID();
    expect(await provision(`/v1_0/apiuser/${unknown}`, {})).toMatchObject({
      status: 404,
      body: { code: 'RESOURCE_NOT_FOUND' },
    });
    expect((await provision(`/v1_0/apiuser/${unknown}/apikey`, { method: 'POST' })).status).toBe(404);
    expect((await provision('/v1_0/apiuser/not-a-uuid', {})).status).toBe(400);
    const noKey = await fetch(`${sandbox.url}/v1_0/apiuser/${userId}`).then(answerOf);
    expect(noKey).toMatchObject({ status: 401, body: { statusCode: 401 } });
    const wrongKey = await provision(`/v1_0/apiuser/${userId}`, {
      headers: { 'Ocp-Apim-Subscription-Key': 'not-a-key' },
    });
    expect(wrongKey.status).toBe(401);
  });
});

/** A local callback listener answering `status` (or never, for 0); records what it gets. */
async function listener(status: number) {
  const received: Array<{ method: string; body: string }> = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    request.on('end', () => {
      received.push({ method: request.method ?? '', body });
      if (status !== 0) response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A callback URL at a local port, on the loopback address's name `127.0.0.1`. */
const loopback = (port: number, product: Product) => `http://127.0.0.1:${port}/momo/${product}`;

/** A POST with an X-Callback-Url, under a given bearer token. */
function createWithCallback(
  sim: MomoSimulator,
  product: Product,
  callbackUrl: string,
  body = requestBody(product),
  authorization?: string,
) {
  return create(sim, product, body, {
    'X-Callback-Url': callbackUrl,
    ...(authorization === undefined ? {} : { Authorization: authorization }),
  });
}

describe('callbacks: the registered host, the method and body, the retries', () => {
  it("refuses a callback URL off the API user's providerCallbackHost with 500 INVALID_CALLBACK_URL_HOST", async () => {
    const receiver = await listener(200);
    try {
      for (const registered of ['localhost', 'http://localhost:8000/callback']) {
        const userId = randomUUID();
        const headers = { 'Ocp-Apim-Subscription-Key': sandbox.credentials.collectionSubscriptionKey };
        await fetch(`${sandbox.url}/v1_0/apiuser`, {
          method: 'POST',
          headers: { ...headers, 'X-Reference-Id': userId },
          body: JSON.stringify({ providerCallbackHost: registered }),
        });
        const keyAnswer = await fetch(`${sandbox.url}/v1_0/apiuser/${userId}/apikey`, {
          method: 'POST',
          headers,
        });
        const { apiKey } = (await keyAnswer.json()) as { apiKey: string };
        const token = await fetch(`${sandbox.url}/collection/token/`, {
          method: 'POST',
          headers: {
            ...headers,
            Authorization: `Basic ${Buffer.from(`${userId}:${apiKey}`).toString('base64')}`,
          },
        });
        const bearerOfUser = `Bearer ${((await token.json()) as { access_token: string }).access_token}`;
        const body = requestBody('collection', { currency: 'EUR' });
        const offHost = await createWithCallback(
          sandbox,
          'collection',
          loopback(receiver.port, 'collection'),
          body,
          bearerOfUser,
        );
        expect(offHost, registered).toMatchObject({
          status: 500,
          body: { code: 'INVALID_CALLBACK_URL_HOST' },
        });
        const onHost = await createWithCallback(
          sandbox,
          'collection',
          `http://localhost:${receiver.port}/momo/collection`,
          { ...body, externalId: `ext_${randomUUID()}` },
          bearerOfUser,
        );
        expect(onHost.status, registered).toBe(202);
      }
      // The simulator's own API user registers nothing unless given a host: any host is taken.
      const anyHost = await createWithCallback(
        sandbox,
        'collection',
        loopback(receiver.port, 'collection'),
        requestBody('collection', { currency: 'EUR' }),
      );
      expect(anyHost.status).toBe(202);
      const registeredSim = await startMomoSimulator({ providerCallbackHost: 'localhost' });
      try {
        const refused = await createWithCallback(
          registeredSim,
          'disbursement',
          loopback(receiver.port, 'disbursement'),
        );
        expect(refused).toMatchObject({ status: 500, body: { code: 'INVALID_CALLBACK_URL_HOST' } });
      } finally {
        await registeredSim.close();
      }
      await sandbox.whenIdle();
    } finally {
      await receiver.close();
    }
  });

  it('sends the callback once to a listener that answers, whatever its status, with the body GET answers', async () => {
    for (const status of [200, 500]) {
      const receiver = await listener(status);
      try {
        const sent = await createWithCallback(
          uganda,
          'disbursement',
          loopback(receiver.port, 'disbursement'),
        );
        await uganda.whenIdle();
        const got = await read(uganda, `${PATH.disbursement}/${sent.referenceId}`, 'disbursement');
        expect(receiver.received).toEqual([{ method: 'PUT', body: JSON.stringify(got.body) }]);
        const deliveries = uganda.callbacks.filter((delivery) => delivery.referenceId === sent.referenceId);
        expect(deliveries.map((delivery) => [delivery.attempt, delivery.status])).toEqual([[0, status]]);
      } finally {
        await receiver.close();
      }
    }
  });

  it('sends a callback nobody answers again: the quick retries, then the short block, then stops', async () => {
    const gone = await listener(200);
    await gone.close();
    const retries = { quickCount: 3, quickIntervalMs: 20, shortBlockCount: 2, shortBlockIntervalMs: 60 };
    const retrying = await startMomoSimulator({ processingMs: 10, callbackRetries: retries });
    const once = await startMomoSimulator({ processingMs: 10, callbackRetries: false });
    try {
      const url = loopback(gone.port, 'disbursement');
      const sent = await createWithCallback(retrying, 'disbursement', url);
      await retrying.whenIdle();
      const deliveries = retrying.callbacks.filter((delivery) => delivery.referenceId === sent.referenceId);
      expect(deliveries.map((delivery) => delivery.attempt)).toEqual([0, 1, 2, 3, 4, 5]);
      expect(
        deliveries.every((delivery) => delivery.error !== undefined && delivery.status === undefined),
      ).toBe(true);
      const gaps = deliveries.slice(1).map((delivery, index) => delivery.at - (deliveries[index]?.at ?? 0));
      expect(gaps.slice(0, 3).every((gap) => gap >= retries.quickIntervalMs)).toBe(true);
      expect(gaps.slice(3).every((gap) => gap >= retries.shortBlockIntervalMs)).toBe(true);
      const single = await createWithCallback(once, 'disbursement', url);
      await once.whenIdle();
      expect(once.callbacks.filter((delivery) => delivery.referenceId === single.referenceId)).toHaveLength(
        1,
      );
    } finally {
      await retrying.close();
      await once.close();
    }
  });
});

describe("MTN's sandbox test numbers", () => {
  it('end each request-to-pay and transfer as the Sandbox Use Cases page names it; any other number succeeds', async () => {
    const delayed = 150;
    const mtnSandbox = await startMomoSimulator({
      targetEnvironment: 'sandbox',
      processingMs: 10,
      delayedSettlementMs: delayed,
    });
    try {
      const expected: Record<Product, Record<string, string>> = {
        collection: {
          '46733123450': 'FAILED INTERNAL_PROCESSING_ERROR',
          '46733123451': 'FAILED APPROVAL_REJECTED',
          '46733123452': 'FAILED EXPIRED',
          '46733123453': 'PENDING',
          '46733123455': 'FAILED PAYER_NOT_FOUND',
          '46733123456': 'FAILED PAYEE_NOT_ALLOWED_TO_RECEIVE',
          '46733123457': 'FAILED NOT_ALLOWED',
          '46733123458': 'FAILED NOT_ALLOWED_TARGET_ENVIRONMENT',
          '46733123459': 'FAILED INVALID_CALLBACK_URL_HOST',
          '46733123460': 'FAILED INVALID_CURRENCY',
          '46733123461': 'FAILED INTERNAL_PROCESSING_ERROR',
          '46733123462': 'FAILED SERVICE_UNAVAILABLE',
          '46733123463': 'FAILED COULD_NOT_PERFORM_TRANSACTION',
          '46733123499': 'SUCCESSFUL',
        },
        disbursement: {
          '46733123450': 'FAILED INTERNAL_PROCESSING_ERROR',
          '46733123451': 'FAILED APPROVAL_REJECTED',
          '46733123452': 'FAILED EXPIRED',
          '46733123453': 'PENDING',
          '46733123455': 'FAILED NOT_ENOUGH_FUNDS',
          '46733123456': 'FAILED PAYER_LIMIT_REACHED',
          '46733123457': 'FAILED PAYEE_NOT_FOUND',
          '46733123458': 'FAILED NOT_ALLOWED',
          '46733123459': 'FAILED NOT_ALLOWED_TARGET_ENVIRONMENT',
          '46733123460': 'FAILED INVALID_CALLBACK_URL_HOST',
          '46733123461': 'FAILED INVALID_CURRENCY',
          '46733123462': 'FAILED INTERNAL_PROCESSING_ERROR',
          '46733123463': 'FAILED SERVICE_UNAVAILABLE',
          '46733123499': 'SUCCESSFUL',
        },
      };
      const statusOf = async (product: Product, referenceId: string) => {
        const { body } = await read(mtnSandbox, `${PATH[product]}/${referenceId}`, product);
        const { status, reason } = body as { status: string; reason?: string };
        return reason === undefined ? status : `${status} ${reason}`;
      };
      for (const product of ['collection', 'disbursement'] as const) {
        const made: Array<[string, string]> = [];
        for (const msisdn of [...Object.keys(expected[product]), '46733123454']) {
          const party = { partyIdType: 'MSISDN', partyId: msisdn };
          const body = requestBody(product, { currency: 'EUR', [PARTY[product]]: party });
          const created = await create(mtnSandbox, product, body);
          expect(created.status, msisdn).toBe(202);
          made.push([msisdn, created.referenceId]);
        }
        const delayedReference = made.at(-1)?.[1] ?? '';
        expect(await statusOf(product, delayedReference)).toBe('PENDING');
        await mtnSandbox.whenIdle();
        for (const [msisdn, referenceId] of made.slice(0, -1)) {
          expect(await statusOf(product, referenceId), `${product} ${msisdn}`).toBe(
            expected[product][msisdn],
          );
        }
        expect(await statusOf(product, delayedReference), `${product} 46733123454 (Delayed)`).toBe(
          'SUCCESSFUL',
        );
      }
    } finally {
      await mtnSandbox.close();
    }
  });
});
