/**
 * The OpenAPI document: the committed openapi.json is the one generated from the route schemas, a real
 * validator (Redocly) accepts it, the API serves it, and the /docs reference page works offline.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESTINATION_TYPES } from '../src/domain/transfers.ts';
import { buildApp } from '../src/http/app.ts';
import { documentationOnlyDeps } from '../src/main.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { fundedWallet } from './support/ledger.ts';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOCUMENT_FILE = 'openapi.json';
const REDOCLY_BIN = fileURLToPath(new URL('../node_modules/.bin/redocly', import.meta.url));
const LINT_TIMEOUT_MS = 30_000;
const PROBLEM_CONTENT = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
const NAMED_COMPONENTS = [
  'Problem',
  'Wallet',
  'Balance',
  'Customer',
  'Transfer',
  'Event',
  'TransferEventData',
  'JournalEntry',
  'LedgerAccount',
];
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface Operation {
  method: string;
  path: string;
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; schema?: unknown; description?: string }[];
  requestBody?: unknown;
  responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: unknown }>;
}

/** Exactly what `mkoba openapi` writes. */
function serialise(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

function operationsOf(document: any): Operation[] {
  return Object.entries(document.paths as Record<string, Record<string, object>>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => ({ ...(operation as Operation), method, path })),
  );
}

function label(operation: Operation): string {
  return `${operation.method.toUpperCase()} ${operation.path}`;
}

function takesInput(operation: Operation): boolean {
  return (operation.parameters?.length ?? 0) > 0 || operation.requestBody !== undefined;
}

const SCHEMAS = '#/components/schemas/';

interface ObjectSchema {
  properties: Record<string, { const?: string; examples?: unknown[] }>;
  additionalProperties?: unknown;
}

/** A validator of values against the document's component schemas (JSON Schema 2020-12 subset we use). */
function componentValidator(document: any) {
  const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
  ajv.addSchema({ $id: 'openapi.json', components: document.components });
  return (name: string, value: unknown): string[] => {
    const validate = ajv.getSchema(`openapi.json${SCHEMAS}${name}`);
    if (!validate) throw new Error(`no component ${name}`);
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  };
}

/** The destination each variant's property examples make: what the reference page shows as the example. */
function exampleOf(variant: ObjectSchema): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(variant.properties).map(([name, property]) => [
      name,
      property.const ?? property.examples?.[0],
    ]),
  );
}

function destinationVariants(document: any): [string, ObjectSchema][] {
  return (document.components.schemas.TransferDestination.oneOf as { $ref: string }[]).map(({ $ref }) => {
    const name = $ref.slice(SCHEMAS.length);
    return [name, document.components.schemas[name] as ObjectSchema];
  });
}

async function readCommitted(): Promise<string> {
  return readFile(new URL(`../${DOCUMENT_FILE}`, import.meta.url), 'utf8');
}

describe('the committed OpenAPI document', () => {
  let committedText: string;
  let generatedText: string;
  let document: any;
  beforeAll(async () => {
    // Built as `mkoba openapi` builds it: the document depends only on the route schemas.
    const app = await buildApp({ deps: documentationOnlyDeps() });
    generatedText = serialise(app.swagger());
    await app.close();
    committedText = await readCommitted();
    document = JSON.parse(committedText);
  });

  it('compiles every route’s response schemas into serializers (built lazily at run time)', async () => {
    // The server builds each serializer on first use; built all at once here, a schema fast-json-stringify
    // cannot compile fails this test rather than the first request that answers with it.
    const eager = await buildApp({ deps: documentationOnlyDeps(), eagerSerializers: true });
    await eager.close();
  });

  it('is the document generated from the route schemas', () => {
    const stale = `${DOCUMENT_FILE} is out of date with the route schemas: run \`npm run openapi\` and commit it`;
    expect(JSON.parse(committedText), stale).toEqual(JSON.parse(generatedText));
    expect(committedText, stale).toBe(generatedText);
  });

  it(
    'passes redocly lint with no errors and no warnings',
    async () => {
      const { exitCode, stdout, stderr } = await new Promise<{
        exitCode: number;
        stdout: string;
        stderr: string;
      }>((resolve) => {
        execFile(
          REDOCLY_BIN,
          ['lint', DOCUMENT_FILE, '--format=json'],
          {
            cwd: REPO_ROOT,
            timeout: LINT_TIMEOUT_MS,
            env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
          },
          (error, stdout, stderr) => {
            const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
            resolve({ exitCode: code, stdout, stderr });
          },
        );
      });
      expect(exitCode, `redocly lint failed:\n${stdout}\n${stderr}`).toBe(0);
      const report = JSON.parse(stdout) as {
        totals: { errors: number; warnings: number };
        problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
      };
      const problems = report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
      expect(problems).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    },
    LINT_TIMEOUT_MS * 2,
  );

  it('is OpenAPI 3.1 with named components, not generated names', () => {
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    const names = Object.keys(document.components.schemas);
    expect(names).toEqual(expect.arrayContaining(NAMED_COMPONENTS));
    for (const name of names) expect(name, 'component schema name').not.toMatch(/^def-\d+$/);
    expect(committedText).not.toMatch(/#\/components\/schemas\/def-\d+/);
  });

  it('gives every operation a unique operationId, a summary, a declared tag and its security', () => {
    const operations = operationsOf(document);
    expect(operations.length).toBeGreaterThan(0);
    const declaredTags = (document.tags as { name: string }[]).map((t) => t.name);
    const schemes = Object.keys(document.components.securitySchemes);
    for (const operation of operations) {
      const at = label(operation);
      expect(operation.operationId, at).toMatch(/^[a-z][A-Za-z0-9]*$/);
      expect(operation.summary?.trim(), at).toBeTruthy();
      expect(operation.tags?.length, at).toBeGreaterThan(0);
      for (const tag of operation.tags ?? []) expect(declaredTags, at).toContain(tag);
      // Explicit on every operation: `[]` marks a public one; there is no document-wide default.
      expect(Array.isArray(operation.security), `${at} declares security`).toBe(true);
      for (const requirement of operation.security ?? []) {
        for (const scheme of Object.keys(requirement)) expect(schemes, at).toContain(scheme);
      }
    }
    const ids = operations.map((o) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.security).toBeUndefined();
  });

  it('documents the Idempotency-Key header on every POST, and Idempotent-Replayed on its success', () => {
    const posts = operationsOf(document).filter((o) => o.method === 'post');
    expect(posts.length).toBeGreaterThan(0);
    for (const operation of posts) {
      const at = label(operation);
      const header = operation.parameters?.find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
      expect(header, `${at} documents the Idempotency-Key header`).toBeDefined();
      expect(header?.schema, at).toMatchObject({ type: 'string' });
      expect(header?.description, at).toBeTruthy();
      const successes = Object.entries(operation.responses).filter(([status]) => status.startsWith('2'));
      expect(successes.length, at).toBeGreaterThan(0);
      for (const [status, response] of successes) {
        expect(response.headers, `${at} ${status}`).toHaveProperty('Idempotent-Replayed');
      }
      for (const status of ['409', '422']) expect(operation.responses, at).toHaveProperty(status);
    }
  });

  it('documents the Idempotency-Key header on every PATCH and DELETE too, with the answers a key brings', () => {
    const writes = operationsOf(document).filter((o) => o.method === 'patch' || o.method === 'delete');
    expect(writes.length).toBeGreaterThan(0);
    for (const operation of writes) {
      const at = label(operation);
      const header = operation.parameters?.find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
      expect(header?.schema, `${at} documents the Idempotency-Key header`).toMatchObject({ type: 'string' });
      for (const [status, response] of Object.entries(operation.responses).filter(([s]) =>
        s.startsWith('2'),
      )) {
        expect(response.headers, `${at} ${status}`).toHaveProperty('Idempotent-Replayed');
      }
      for (const status of ['409', '422']) expect(operation.responses, at).toHaveProperty(status);
    }
  });

  it('documents the WWW-Authenticate header on every 401', () => {
    const secured = operationsOf(document).filter((o) => (o.security ?? []).length > 0);
    expect(secured.length).toBeGreaterThan(0);
    for (const operation of secured) {
      expect(operation.responses['401']?.headers, label(operation)).toHaveProperty('WWW-Authenticate');
    }
  });

  it('describes a transfer destination as a oneOf told apart by type, one component per destination type', () => {
    const schemas = document.components.schemas;
    const variants = destinationVariants(document);
    expect(variants.map(([, variant]) => variant.properties.type?.const).sort()).toEqual(
      [...DESTINATION_TYPES].sort(),
    );
    expect(schemas.TransferDestination.discriminator.propertyName).toBe('type');
    for (const [name, variant] of variants) {
      const type = variant.properties.type?.const as string;
      expect(schemas.TransferDestination.discriminator.mapping[type], name).toBe(`${SCHEMAS}${name}`);
      expect(variant.additionalProperties, `${name}: no free-form fields`).toBe(false);
      for (const [field, property] of Object.entries(variant.properties)) {
        if (field !== 'type') expect(property.examples?.length, `${name}.${field} has an example`).toBe(1);
      }
    }
    const transferRef = { $ref: `${SCHEMAS}TransferDestination` };
    expect(schemas.Transfer.properties.destination).toEqual(transferRef);
    expect(schemas.TransferEventData.properties.destination).toEqual(transferRef);
    const createBody = document.paths['/v1/transfers'].post.requestBody.content['application/json'].schema;
    expect(createBody.properties.destination).toEqual({ $ref: `${SCHEMAS}TransferDestinationRequest` });
    expect(schemas.TransferDestinationRequest.oneOf).toEqual([
      transferRef,
      expect.objectContaining({ type: 'string', pattern: expect.stringMatching(/^\^wallet_/) }),
    ]);
    expect(committedText).not.toContain('x-documented-as');
  });

  it('gives destination examples that the documented schemas accept', () => {
    const validate = componentValidator(document);
    for (const [name, variant] of destinationVariants(document)) {
      const example = exampleOf(variant);
      expect(validate(name, example), name).toEqual([]);
      expect(validate('TransferDestination', example), name).toEqual([]);
      expect(validate('TransferDestinationRequest', example), name).toEqual([]);
    }
    expect(validate('TransferDestinationRequest', 'wallet_01jcz3m5e7x8y9a0b1c2d3e4f5')).toEqual([]);
    expect(
      validate('TransferDestination', { type: 'till', till_number: '123456', phone: '+254700000000' }),
    ).not.toEqual([]);
  });

  it('documents problem responses for every operation, each an application/problem+json Problem', () => {
    for (const operation of operationsOf(document)) {
      const at = label(operation);
      const statuses = Object.keys(operation.responses);
      const problems = statuses.filter((s) => /^[45]/.test(s));
      expect(problems.length, `${at} documents its problem responses`).toBeGreaterThan(0);
      for (const status of problems) {
        expect(operation.responses[status]?.description, `${at} ${status}`).toBeTruthy();
        expect(operation.responses[status]?.content, `${at} ${status}`).toEqual(PROBLEM_CONTENT);
      }
      expect(statuses, at).toContain('500');
      const secured = (operation.security ?? []).length > 0;
      if (takesInput(operation)) expect(statuses, `${at} takes input`).toContain('400');
      if (secured) expect(statuses, `${at} needs an API key`).toEqual(expect.arrayContaining(['401', '403']));
      if (operation.path.includes('{')) expect(statuses, `${at} names a resource`).toContain('404');
      // Only a public operation that takes no input at all can have no 4xx to document.
      if (!problems.some((s) => s.startsWith('4'))) {
        expect({ secured, takesInput: takesInput(operation) }, `${at} has no 4xx`).toEqual({
          secured: false,
          takesInput: false,
        });
      }
    }
  });

  it('marks a request body optional exactly where the server takes none (rotate-secret, sandbox fail)', () => {
    const bodies = operationsOf(document).filter((o) => o.requestBody !== undefined);
    const optional = bodies
      .filter((o) => (o.requestBody as { required?: boolean }).required !== true)
      .map((o) => o.operationId)
      .sort();
    expect(optional).toEqual(['rotateWebhookSubscriptionSecret', 'sandboxFailTransfer']);
  });
});

describe.each(BACKENDS)('optional request bodies on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(() => t.close());

  it('rotate-secret answers a call with no body, as the document says it may be made', async () => {
    const created = await api(t, 'POST', '/v1/webhook-subscriptions', {
      body: { url: 'https://93.184.215.14/hooks', events: ['*'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const rotated = await api(t, 'POST', `/v1/webhook-subscriptions/${created.data.id}/rotate-secret`);
    expect(rotated.statusCode, rotated.body).toBe(200);
    const operation = JSON.parse(await readCommitted()).paths['/v1/webhook-subscriptions/{id}/rotate-secret']
      .post;
    expect(operation.requestBody.required).toBe(false);
  });
});

describe.each(BACKENDS)('the API reference served on %s', (backend) => {
  let t: TestApp;
  let committed: unknown;
  beforeAll(async () => {
    t = await startTestApp(backend);
    committed = JSON.parse(await readCommitted());
  });
  afterAll(() => t.close());

  it('serves the committed document at /v1/openapi.json, without an API key, naming itself as the server', async () => {
    const response = await api(t, 'GET', '/v1/openapi.json', { key: null });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('application/json');
    expect({ ...response.data, servers: (committed as { servers: unknown }).servers }).toEqual(committed);
    expect(response.data.servers).toEqual([{ url: 'http://localhost:80', description: expect.any(String) }]);
  });

  for (const url of ['/v1/openapi.json', '/docs/json']) {
    it(`names the address the request came to as the server of ${url}`, async () => {
      const served = async (headers: Record<string, string>) =>
        (await api(t, 'GET', url, { key: null, headers })).data.servers;
      expect(await served({ host: 'api.example.test:8443' })).toEqual([
        { url: 'http://api.example.test:8443', description: expect.any(String) },
      ]);
      expect(await served({ host: '[::1]:8080' })).toEqual([
        { url: 'http://[::1]:8080', description: expect.any(String) },
      ]);
      // No proxy is trusted by default: its headers do not change the address.
      expect(
        await served({
          host: 'internal:8080',
          'x-forwarded-host': 'evil.test',
          'x-forwarded-proto': 'https',
        }),
      ).toEqual([{ url: 'http://internal:8080', description: expect.any(String) }]);
      // A Host that is no host name is not copied into a URL.
      expect(await served({ host: 'a b"c' })).toEqual([{ url: '/', description: expect.any(String) }]);
    });
  }

  it('validates the documented Idempotency-Key header under that name', async () => {
    const response = await api(t, 'POST', '/v1/customers', {
      body: { type: 'individual', name: 'Header Case' },
      headers: { 'Idempotency-Key': 'has a space' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.data).toMatchObject({ code: 'validation_error', param: 'Idempotency-Key' });
  });

  it('gives destination examples the server accepts, making transfers the documented Transfer schema describes', async () => {
    const document = committed as any;
    const validate = componentValidator(document);
    const source = await fundedWallet(t, '100000.00');
    // A crypto address takes the stablecoin its example names, from a wallet in that currency.
    const stablecoinSource = await fundedWallet(t, '1000.000000', 'USDC');
    for (const [name, variant] of destinationVariants(document)) {
      const destination = exampleOf(variant);
      const stablecoin = destination.type === 'crypto_address';
      const response = await api(t, 'POST', '/v1/transfers', {
        body: stablecoin
          ? { source: stablecoinSource, destination, amount: '150.000000', currency: destination.asset }
          : { source, destination, amount: '150.00', currency: 'KES' },
      });
      if (destination.type === 'wallet') {
        // The example wallet id is well-formed but not one of this organization's wallets.
        expect(response.data, name).toMatchObject({ code: 'resource_missing', param: 'destination' });
        continue;
      }
      expect(response.statusCode, `${name}: ${response.body}`).toBe(201);
      expect(response.data.destination, name).toEqual(destination);
      expect(validate('Transfer', response.data), name).toEqual([]);
    }
    const payee = await fundedWallet(t, '0');
    for (const destination of [payee, { type: 'wallet', wallet: payee }]) {
      const response = await api(t, 'POST', '/v1/transfers', {
        body: { source, destination, amount: '1.00', currency: 'KES' },
      });
      expect(response.statusCode, response.body).toBe(201);
      expect(validate('TransferDestinationRequest', destination)).toEqual([]);
      expect(validate('Transfer', response.data)).toEqual([]);
    }
  });

  for (const page of ['/docs', '/docs/']) {
    it(`serves ${page} as a page whose scripts and styles all come from this server`, async () => {
      const response = await api(t, 'GET', page, { key: null });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toContain('text/html');
      const html = response.body;
      expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/i); // no inline script
      expect(html).not.toMatch(/<style[\s>]/i); // no inline style sheet

      const assets = [...html.matchAll(/<(?:script|link)\b[^>]*\s(?:src|href)="([^"]*)"/gi)].map(
        (m) => m[1] ?? '',
      );
      const scripts = assets.filter((a) => a.endsWith('.js'));
      const styles = assets.filter((a) => a.endsWith('.css'));
      expect(scripts.length).toBeGreaterThan(0);
      expect(styles.length).toBeGreaterThan(0);
      const base = new URL(page, 'http://mkoba.test');
      for (const asset of assets) {
        expect(asset, 'an asset from another host').not.toMatch(/^([a-z][a-z0-9+.-]*:|\/\/)/i);
        const url = new URL(asset, base);
        expect(url.origin).toBe(base.origin);
        const fetched = await api(t, 'GET', url.pathname, { key: null });
        expect(fetched.statusCode, asset).toBe(200);
        expect(fetched.rawPayload.length, asset).toBeGreaterThan(0);
        if (asset.endsWith('.css')) {
          expect(fetched.headers['content-type'], asset).toContain('text/css');
          expect(fetched.body, `${asset} imports nothing from another host`).not.toMatch(
            /@import|url\(\s*['"]?(https?:)?\/\//i,
          );
        }
        if (asset.endsWith('.js')) expect(fetched.headers['content-type'], asset).toContain('javascript');
      }
    });
  }

  it('forbids the reference page, by its Content-Security-Policy, to load anything from another origin', async () => {
    const response = await api(t, 'GET', '/docs', { key: null });
    const policy = String(response.headers['content-security-policy'] ?? '');
    const directives = new Map(
      policy
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .filter((words) => words[0])
        .map(([name, ...sources]) => [name, sources]),
    );
    for (const name of ['default-src', 'script-src', 'style-src', 'font-src', 'img-src', 'connect-src']) {
      const sources = directives.get(name);
      expect(sources, name).toBeDefined();
      for (const source of sources ?? [])
        expect(["'self'", "'none'", 'data:'], `${name} ${source}`).toContain(source);
    }
    // It would send every same-origin asset over HTTPS, which breaks the page on plain HTTP.
    expect(directives.has('upgrade-insecure-requests')).toBe(false);
  });

  it('points the explorer at /v1/openapi.json, which serves the same document as /docs/json', async () => {
    const initializer = await api(t, 'GET', '/docs/static/swagger-initializer.js', { key: null });
    expect(initializer.statusCode).toBe(200);
    // `urls` takes the place of the plugin's own `url` (./json): the explorer loads its first entry.
    const urls = initializer.body.match(/"urls":(\[[^\]]*\])/)?.[1];
    expect(JSON.parse(urls ?? 'null')).toEqual([{ url: '/v1/openapi.json', name: 'Mkoba API reference' }]);
    expect(initializer.body).toMatch(/validatorUrl: null/); // no badge from validator.swagger.io

    const served = await api(t, 'GET', '/v1/openapi.json', {
      key: null,
      headers: { host: 'api.example.test' },
    });
    const document = await api(t, 'GET', '/docs/json', { key: null, headers: { host: 'api.example.test' } });
    expect(served.statusCode).toBe(200);
    expect(document.statusCode).toBe(200);
    expect(served.data).toEqual(document.data);
    // The same document, except that "Try it out" targets the server the page came from.
    expect(served.data.servers).toEqual([
      { url: 'http://api.example.test', description: expect.any(String) },
    ]);
    expect({ ...served.data, servers: (committed as { servers: unknown }).servers }).toEqual(committed);
  });

  it('carries Mkoba’s name: the page title, the top-bar logo and the favicon, not the UI’s defaults', async () => {
    const page = await api(t, 'GET', '/docs', { key: null });
    expect(page.body.match(/<title>([^<]*)<\/title>/)?.[1]).toBe('Mkoba API reference');
    const icons = [...page.body.matchAll(/<link rel="icon"[^>]*href="([^"]*)"/g)].map((m) => m[1] ?? '');
    expect(icons).toEqual(['/docs/static/theme/favicon.svg']);
    const favicon = await api(t, 'GET', icons[0] ?? '', { key: null });
    expect(favicon.statusCode).toBe(200);
    expect(favicon.headers['content-type']).toContain('image/svg+xml');

    const initializer = (await api(t, 'GET', '/docs/static/swagger-initializer.js', { key: null })).body;
    const logo = initializer.match(/data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/)?.[1];
    expect(logo).toBeDefined();
    const svg = Buffer.from(logo ?? '', 'base64').toString('utf8');
    expect(svg).toContain('>Mkoba API</text>');
    expect(svg).not.toMatch(/swagger|fastify/i);
  });
});
