/**
 * Field errors are worded by us, not by the validator: "owner is required", not "owner must have
 * required property 'owner'". Each keyword a schema may fail on has its own wording; codes and params
 * are as before.
 */
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toAppError } from '../src/http/problems.ts';
import { type ApiResponse, api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** Phrases of Ajv's own messages, none of which may reach a client. */
const VALIDATOR_WORDING =
  /required property|must NOT|must match (pattern|format)|must be (string|number|integer|object|array|boolean|null|equal to constant|>=|<=|>|<)\b|property name must be valid|must have (fewer|more)/;

/** Field errors for `value` under `schema`, as an API response would carry them. */
function errorsFor(schema: object, value: unknown, context = 'body') {
  const validate = addFormats(new Ajv({ allErrors: true, strict: false })).compile(schema);
  expect(validate(value)).toBe(false);
  return toAppError(
    Object.assign(new Error('invalid'), { validation: validate.errors, validationContext: context }),
  ).errors;
}

describe('field error wording', () => {
  const object = (properties: object) => ({ type: 'object', properties });

  it.each([
    [object({ n: { type: 'integer' } }), { n: 1.5 }, 'n', 'invalid_type', 'n must be an integer'],
    [
      object({ n: { type: ['string', 'null'] } }),
      { n: 1 },
      'n',
      'invalid_type',
      'n must be a string or null',
    ],
    [object({ n: { type: 'boolean' } }), { n: 1 }, 'n', 'invalid_type', 'n must be true or false'],
    [object({ n: { const: 'x' } }), { n: 'y' }, 'n', 'invalid_value', 'n must be "x"'],
    [object({ n: { enum: ['a', 'b'] } }), { n: 'c' }, 'n', 'invalid_value', 'n must be one of: a, b'],
    [object({ n: { minLength: 3 } }), { n: 'ab' }, 'n', 'too_short', 'n must be at least 3 characters'],
    [object({ n: { minLength: 1 } }), { n: '' }, 'n', 'too_short', 'n must not be empty'],
    [object({ n: { maxLength: 3 } }), { n: 'abcd' }, 'n', 'too_long', 'n must be at most 3 characters'],
    [object({ n: { maxLength: 1 } }), { n: 'ab' }, 'n', 'too_long', 'n must be at most 1 character'],
    [object({ n: { minimum: 2 } }), { n: 1 }, 'n', 'out_of_range', 'n must be at least 2'],
    [object({ n: { maximum: 2 } }), { n: 3 }, 'n', 'out_of_range', 'n must be at most 2'],
    [object({ n: { exclusiveMinimum: 0 } }), { n: 0 }, 'n', 'out_of_range', 'n must be greater than 0'],
    [object({ n: { exclusiveMaximum: 9 } }), { n: 9 }, 'n', 'out_of_range', 'n must be less than 9'],
    [object({ n: { multipleOf: 5 } }), { n: 7 }, 'n', 'invalid_value', 'n must be a multiple of 5'],
    [
      object({ n: { pattern: '^[a-z]+$' } }),
      { n: '1' },
      'n',
      'invalid_format',
      'n must match the pattern ^[a-z]+$',
    ],
    [object({ n: { format: 'email' } }), { n: 'x' }, 'n', 'invalid_format', 'n must be an email address'],
    [object({ n: { format: 'uuid' } }), { n: 'x' }, 'n', 'invalid_format', 'n must be a valid uuid'],
    [object({ n: { minItems: 2 } }), { n: [1] }, 'n', 'too_few', 'n must have at least 2 items'],
    [object({ n: { maxItems: 1 } }), { n: [1, 2] }, 'n', 'too_many', 'n may have at most 1 item'],
    [
      object({ n: { uniqueItems: true } }),
      { n: [1, 1] },
      'n',
      'invalid_value',
      'n must not repeat an item (items 0 and 1 are the same)',
    ],
    [object({ n: { maxProperties: 1 } }), { n: { a: 1, b: 2 } }, 'n', 'too_many', 'n may have at most 1 key'],
    [object({ n: { minProperties: 2 } }), { n: {} }, 'n', 'too_few', 'n must have at least 2 keys'],
    [
      object({ n: { anyOf: [{ type: 'string' }, { type: 'number' }] } }),
      { n: true },
      'n',
      'invalid_type',
      'n must be a string',
    ],
    [{ type: 'object', required: ['a'] }, {}, 'a', 'missing', 'a is required'],
    [
      { type: 'object', additionalProperties: false },
      { z: 1 },
      'z',
      'unknown_field',
      'z is not a known field',
    ],
    [{ type: 'object', minProperties: 1 }, {}, 'body', 'too_few', 'body must have at least 1 field'],
  ])('%j with %j: %s %s', (schema, value, param, code, message) => {
    const [first] = errorsFor(schema, value);
    expect(first).toEqual({ param, code, message });
  });

  it('words an anyOf that no branch satisfies, after the branches', () => {
    const errors = errorsFor(object({ n: { anyOf: [{ type: 'string' }, { type: 'number' }] } }), { n: true });
    expect(errors.at(-1)).toEqual({
      param: 'n',
      code: 'invalid',
      message: 'n does not match any of the allowed forms',
    });
  });

  it('names the key that breaks a rule on keys, once', () => {
    const errors = errorsFor(object({ m: { type: 'object', propertyNames: { maxLength: 3 } } }), {
      m: { ok: '1', long: '2' },
    });
    expect(errors).toEqual([
      { param: 'm.long', code: 'invalid_key', message: 'm key "long" must be at most 3 characters' },
    ]);
  });

  it('spells header names canonically', () => {
    const errors = errorsFor(
      object({ 'idempotency-key': { pattern: '^[a-z]+$' } }),
      { 'idempotency-key': '1' },
      'headers',
    );
    expect(errors).toEqual([
      {
        param: 'Idempotency-Key',
        code: 'invalid_format',
        message: 'Idempotency-Key must match the pattern ^[a-z]+$',
      },
    ]);
  });
});

describe.each(BACKENDS)('field errors through the API on %s', (backend) => {
  let t: TestApp;
  const seen: ApiResponse[] = [];
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(async () => {
    // No answer of this file carries the validator's own words.
    for (const response of seen) {
      for (const error of response.data.errors) expect(error.message).not.toMatch(VALIDATOR_WORDING);
      expect(response.data.detail).not.toMatch(VALIDATOR_WORDING);
    }
    await t.close();
  });

  async function errorsOf(...args: Parameters<typeof api>) {
    const response = await api(...args);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.data.code).toBe('validation_error');
    seen.push(response);
    return response.data.errors;
  }

  it('says a field is required, and of which type a value must be', async () => {
    expect(await errorsOf(t, 'POST', '/v1/wallets', { body: { currency: 'KES' } })).toEqual([
      { param: 'owner', code: 'missing', message: 'owner is required' },
    ]);
    expect(
      await errorsOf(t, 'POST', '/v1/transfers', {
        body: { source: 'wallet_x', destination: 5, amount: true, currency: 'KES' },
      }),
    ).toEqual([
      {
        param: 'source',
        code: 'invalid_format',
        message: 'source must be an id of the form wallet_<26 characters>',
      },
      { param: 'destination', code: 'invalid_type', message: 'destination must be a string or an object' },
      { param: 'amount', code: 'invalid_type', message: 'amount must be a string or a number' },
    ]);
  });

  it('states lengths, counts, formats and the key at fault', async () => {
    const longKey = 'k'.repeat(41);
    expect(
      await errorsOf(t, 'POST', '/v1/customers', {
        body: { type: 'individual', name: '', email: 'nope', metadata: { [longKey]: 'v', a: 1 } },
      }),
    ).toEqual([
      { param: 'name', code: 'too_short', message: 'name must not be empty' },
      { param: 'email', code: 'invalid_format', message: 'email must be an email address' },
      {
        param: `metadata.${longKey}`,
        code: 'invalid_key',
        message: `metadata key "${longKey}" must be at most 40 characters`,
      },
      { param: 'metadata.a', code: 'invalid_type', message: 'metadata.a must be a string' },
    ]);
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    expect(
      await errorsOf(t, 'POST', '/v1/customers', {
        body: { type: 'individual', name: 'x', metadata: tooMany },
      }),
    ).toEqual([{ param: 'metadata', code: 'too_many', message: 'metadata may have at most 50 keys' }]);
    expect(
      await errorsOf(t, 'POST', '/v1/webhook-subscriptions', {
        body: { url: 'http://127.0.0.1:9/a b', events: [], description: 'd'.repeat(501) },
      }),
    ).toEqual([
      { param: 'url', code: 'invalid_format', message: 'url must not contain spaces' },
      { param: 'events', code: 'too_few', message: 'events must have at least 1 item' },
      { param: 'description', code: 'too_long', message: 'description must be at most 500 characters' },
    ]);
  });

  it('words query, header and whole-body errors the same way', async () => {
    expect(await errorsOf(t, 'GET', '/v1/wallets?limit=0')).toEqual([
      { param: 'limit', code: 'out_of_range', message: 'limit must be at least 1' },
    ]);
    expect(await errorsOf(t, 'GET', '/v1/wallets?limit=1000&created[gte]=yesterday')).toEqual([
      { param: 'limit', code: 'out_of_range', message: 'limit must be at most 100' },
      {
        param: 'created[gte]',
        code: 'invalid_format',
        message: 'created[gte] must be an RFC 3339 date-time, e.g. 2025-01-31T09:30:00Z',
      },
    ]);
    expect(
      await errorsOf(t, 'POST', '/v1/customers', {
        body: { type: 'individual', name: 'x' },
        headers: { 'idempotency-key': 'has space' },
      }),
    ).toEqual([
      {
        param: 'Idempotency-Key',
        code: 'invalid_format',
        message: 'Idempotency-Key must be 1 to 255 printable ASCII characters, without spaces',
      },
    ]);
    expect(
      await errorsOf(t, 'PATCH', '/v1/webhook-subscriptions/whsub_01m80v1f31hmw57sgkdkcnyxra', { body: {} }),
    ).toEqual([{ param: 'body', code: 'too_few', message: 'body must have at least 1 field' }]);
  });
});
