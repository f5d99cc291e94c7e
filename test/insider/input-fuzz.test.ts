/**
 * Every operation in openapi.json that takes a body (or a write method that takes none), fed hostile
 * bodies through the real HTTP layer with a key holding every scope: bodies nested far deeper than
 * REQUEST_BODY_DEPTH_MAX (objects and arrays) are a 4xx problem, never a 500, and an unknown body field is
 * a 400 naming it. Path parameters are well-formed ids, so the body is what is judged.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_ORGANIZATION_NAME } from '../../src/app/seed.ts';
import { REQUEST_BODY_DEPTH_MAX } from '../../src/config.ts';
import { SCOPES } from '../../src/domain/access.ts';
import { jsonNestingDepth } from '../../src/http/bodyParser.ts';
import { toAppError } from '../../src/http/problems.ts';
import { issueApiKey } from '../../src/modules/apiKeys/useCases/keys.ts';
import { BACKENDS, startTestApp, TEST_DATABASE_URL, type TestApp } from '../support/harness.ts';

interface Parameter {
  name: string;
  in: string;
  schema?: { type?: string; pattern?: string; enum?: unknown[] };
}
interface Operation {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, unknown> };
}

const openapi: unknown = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'));
const WRITE_METHODS = ['post', 'put', 'patch', 'delete'];

/** Each operation that takes a JSON body, or is a write that documents none (it must take no fields). */
function bodyOperations(): { method: string; path: string; url: string; name: string }[] {
  const out: { method: string; path: string; url: string; name: string }[] = [];
  const paths = (openapi as unknown as { paths: Record<string, Record<string, Operation>> }).paths;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const content = operation.requestBody?.content;
      const json = content === undefined ? WRITE_METHODS.includes(method) : 'application/json' in content;
      if (!json) continue;
      const url = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
        const parameter = operation.parameters?.find((p) => p.in === 'path' && p.name === name);
        return encodeURIComponent(wellFormed(parameter?.schema));
      });
      out.push({ method: method.toUpperCase(), path, url, name: `${method.toUpperCase()} ${path}` });
    }
  }
  return out;
}

/** A value the path parameter's schema accepts: an id of the right kind, the first of an enum, 1. */
function wellFormed(schema: Parameter['schema']): string {
  if (schema?.enum) return String(schema.enum[0]);
  if (schema?.type === 'integer') return '1';
  const prefix = schema?.pattern?.match(/^\^([a-z]+)_\[/)?.[1];
  if (prefix) return `${prefix}_${'0'.repeat(26)}`;
  return 'mpesa';
}

function nestedObjects(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}
function nestedArrays(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

const OPERATIONS = bodyOperations();

describe('the nesting counter', () => {
  it('counts objects and arrays, skips strings and their escapes', () => {
    expect(jsonNestingDepth('{}', 64)).toBe(1);
    expect(jsonNestingDepth('{"a":[{"b":"[[[{{{\\"["}]}', 64)).toBe(3);
    expect(jsonNestingDepth(nestedArrays(20_000), 64)).toBe(65);
    expect(jsonNestingDepth(nestedObjects(REQUEST_BODY_DEPTH_MAX), REQUEST_BODY_DEPTH_MAX)).toBe(
      REQUEST_BODY_DEPTH_MAX,
    );
  });
});

describe.each(BACKENDS)('hostile bodies on every operation (%s)', (backend) => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    key = (await issueApiKey(t.deps, { organizationName: SANDBOX_ORGANIZATION_NAME, scopes: [...SCOPES] }))
      .key;
  });
  afterAll(() => t?.close());

  async function send(method: string, url: string, payload: string) {
    return t.app.inject({
      method: method as 'POST',
      url,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload,
    });
  }

  it('finds the operations (the ten without a body schema among them)', () => {
    expect(OPERATIONS.length).toBeGreaterThan(60);
    expect(OPERATIONS.map((o) => o.name)).toEqual(
      expect.arrayContaining(['POST /v1/wallets/{id}/virtual-account', 'POST /v1/transfers/{id}/cancel']),
    );
  });

  it('a body nested 3,000 objects or 20,000 arrays deep is a 4xx problem everywhere, never a 500', async () => {
    const failures: string[] = [];
    for (const operation of OPERATIONS) {
      for (const [shape, payload] of [
        ['objects', nestedObjects(3_000)],
        ['arrays', nestedArrays(20_000)],
        ['objects just past the limit', nestedObjects(REQUEST_BODY_DEPTH_MAX + 1)],
      ] as const) {
        const response = await send(operation.method, operation.url, payload);
        const problem = String(response.headers['content-type']).startsWith('application/problem+json');
        if (response.statusCode < 400 || response.statusCode >= 500 || !problem) {
          failures.push(
            `${operation.name} (${shape}): ${response.statusCode} ${response.body.slice(0, 160)}`,
          );
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('a body within the limit is parsed as before (a deep metadata-free body is judged by its schema)', async () => {
    const response = await send('POST', '/v1/transfers/tr_00000000000000000000000000/cancel', '{}');
    // Well-formed and not too deep: the operation runs and finds no such transfer.
    expect(response.statusCode, response.body).toBe(404);
    const deep = await send('POST', '/v1/customers', nestedObjects(REQUEST_BODY_DEPTH_MAX + 1));
    expect(deep.statusCode).toBe(400);
    expect(JSON.parse(deep.body)).toMatchObject({
      code: 'validation_error',
      param: 'body',
      errors: [{ code: 'body_too_deep' }],
    });
  });

  it('an unknown body field is a 400 naming it, on every operation', async () => {
    const failures: string[] = [];
    for (const operation of OPERATIONS) {
      const response = await send(operation.method, operation.url, JSON.stringify({ zz_unknown_field: 'x' }));
      const body = response.statusCode === 400 ? JSON.parse(response.body) : undefined;
      const named =
        body?.param === 'zz_unknown_field' ||
        (body?.errors as { param: string }[] | undefined)?.some((e) => e.param === 'zz_unknown_field');
      if (!named) failures.push(`${operation.name}: ${response.statusCode} ${response.body.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  });
});

describe('a connection pool time-out', () => {
  it('is a 503 service_unavailable with Retry-After, not a 500', () => {
    const problem = toAppError(new Error('timeout exceeded when trying to connect'));
    expect(problem).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(problem.retryAfterSeconds).toBeGreaterThan(0);
  });

  it.runIf(TEST_DATABASE_URL)('node-postgres’s own time-out error maps to it (PostgreSQL)', async () => {
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1, connectionTimeoutMillis: 2_000 });
    const held = await pool.connect();
    try {
      const thrown = await pool.connect().then(
        (client) => {
          client.release();
          return undefined;
        },
        (error: unknown) => error,
      );
      expect(thrown).toBeInstanceOf(Error);
      expect(toAppError(thrown)).toMatchObject({ status: 503, code: 'service_unavailable' });
    } finally {
      held.release();
      await pool.end();
    }
  });
});
