/**
 * Webhook signatures: the domain signer and the SDK verifier against fixed vectors (computed independently
 * with `openssl dgst -sha256 -hmac`), against Stripe's own Node verifier, and against tampered bodies, wrong
 * secrets, stale and future timestamps, malformed headers and secret rotation.
 */
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import {
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from '../packages/sdk/src/index.ts';
import {
  computeSignature,
  formatWebhookSecret,
  isWebhookSecret,
  parseSignatureHeader,
  signatureHeader,
  unixSeconds,
  verifySignatureHeader,
  WEBHOOK_EVENT_ID_HEADER,
  WEBHOOK_SECRET_CHARS,
  WEBHOOK_SECRET_RANDOM_BYTES,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_SIGNING_SECRETS_MAX,
  WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS,
} from '../src/domain/signing.ts';

// Fixed vectors. The secrets are formatWebhookSecret over bytes 0x00..0x1f and over 32 × 0xff (base62 of
// the 256-bit big-endian number, worked out separately); the hex values are
//   printf '%s.%s' "$T" "$BODY" | openssl dgst -sha256 -hmac "$SECRET"
const SECRET_A = 'whsec_003aUlTJC7tjlCTQj2uNU3MFagCXG9LRKRcwGkBIDlf';
const SECRET_B = 'whsec_yhjskwdA6OZ1AL1YmHWZWm8LLG7HjnuCA2j5rOw8Xp1';
const TIMESTAMP = 1763790000;
const BODY =
  '{"id":"evt_01jcz3m5e7x8y9a0b1c2d3e4f5","object":"event","type":"transfer.settled",' +
  '"created_at":"2025-11-22T05:40:00.000Z","environment":"sandbox","product":"mkoba",' +
  '"api_version":"2026-11-22","data":{"transfer_id":"tr_01jcz3m5e7x8y9a0b1c2d3e4f5","status":"settled",' +
  '"rail":"mobile_money","ledger_state":"posted"}}';
const BODY_BYTES = 311;
const HEX_A = '7923f6a5f15dacad43e47d1c916cdd7b12daf5fd4ce04e69d1b3ef49b3821f4f';
const HEX_B = '8386fdf55fae0583f001928c3912f5a18c05a9c1d4dc596f3b2ca6af012dbeb0';
/** A body with non-ASCII characters: signed as its UTF-8 bytes. */
const BODY_UTF8 =
  '{"id":"evt_01jcz3m5e7x8y9a0b1c2d3e4f5","data":{"metadata":{"note":"Malipo ya Wanjikũ — ✓"}}}';
const HEX_A_UTF8 = '1ce00a94f58b09a233ac79ae6ab04ebf3d30816cf0dadec28fbaf0029c8f1907';

const NOW_MS = TIMESTAMP * 1000;
const TOLERANCE = WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS;
const stripe = new Stripe('sk_test_x');

function headersFor(signature: string, eventId = 'evt_01jcz3m5e7x8y9a0b1c2d3e4f5'): Record<string, string> {
  return { 'service-signature': signature, 'service-event-id': eventId };
}

/** The SDK's verdict: 'ok' or the reason it refused. */
function sdkVerdict(
  body: string | Uint8Array,
  headers: Parameters<typeof verifyWebhook>[1],
  secrets: string | string[],
  options: { toleranceSeconds?: number; now?: Date | number } = { now: NOW_MS },
): 'ok' | WebhookVerificationReason {
  try {
    verifyWebhook(body, headers, secrets, options);
    return 'ok';
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
}

/** The domain verifier's verdict on the same input. */
function domainVerdict(
  body: string,
  header: string | undefined,
  secrets: string[],
  nowSeconds = TIMESTAMP,
  tolerance = TOLERANCE,
): string {
  const check = verifySignatureHeader(body, header, secrets, nowSeconds, tolerance);
  return check.ok ? 'ok' : check.reason;
}

describe('webhook secrets', () => {
  it('are whsec_ and the 32 random bytes in 43 base62 characters (fixed vectors)', () => {
    const counting = Uint8Array.from({ length: WEBHOOK_SECRET_RANDOM_BYTES }, (_, i) => i);
    expect(formatWebhookSecret(counting)).toBe(SECRET_A);
    expect(formatWebhookSecret(new Uint8Array(WEBHOOK_SECRET_RANDOM_BYTES).fill(0xff))).toBe(SECRET_B);
    expect(formatWebhookSecret(new Uint8Array(WEBHOOK_SECRET_RANDOM_BYTES))).toBe(`whsec_${'0'.repeat(43)}`);
  });

  it('are well formed, distinct for distinct bytes, and refuse too few bytes', () => {
    const secrets = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const secret = formatWebhookSecret(randomBytes(WEBHOOK_SECRET_RANDOM_BYTES));
      expect(secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
      expect(secret.length).toBe('whsec_'.length + WEBHOOK_SECRET_CHARS);
      expect(isWebhookSecret(secret)).toBe(true);
      secrets.add(secret);
    }
    expect(secrets.size).toBe(200);
    expect(isWebhookSecret('whsec_short')).toBe(false);
    expect(isWebhookSecret(`sk_sandbox_${'a'.repeat(43)}`)).toBe(false);
    expect(() => formatWebhookSecret(new Uint8Array(WEBHOOK_SECRET_RANDOM_BYTES - 1))).toThrow(RangeError);
  });
});

describe('signature header (fixed vectors)', () => {
  it('is t=<seconds>,v1=<hex HMAC-SHA256 keyed by the whole secret string over t.body>', () => {
    expect(Buffer.byteLength(BODY)).toBe(BODY_BYTES);
    expect(computeSignature(BODY, SECRET_A, TIMESTAMP)).toBe(HEX_A);
    expect(signatureHeader(BODY, [SECRET_A], TIMESTAMP)).toBe(`t=${TIMESTAMP},v1=${HEX_A}`);
    expect(signatureHeader(Buffer.from(BODY), [SECRET_A], TIMESTAMP)).toBe(`t=${TIMESTAMP},v1=${HEX_A}`);
  });

  it('carries one v1 per active secret, in the order given, during rotation', () => {
    expect(signatureHeader(BODY, [SECRET_A, SECRET_B], TIMESTAMP)).toBe(
      `t=${TIMESTAMP},v1=${HEX_A},v1=${HEX_B}`,
    );
    expect(signatureHeader(BODY, [SECRET_B, SECRET_A], TIMESTAMP)).toBe(
      `t=${TIMESTAMP},v1=${HEX_B},v1=${HEX_A}`,
    );
  });

  it('signs the UTF-8 bytes of the body, whether given as a string or a Buffer', () => {
    expect(signatureHeader(BODY_UTF8, [SECRET_A], TIMESTAMP)).toBe(`t=${TIMESTAMP},v1=${HEX_A_UTF8}`);
    expect(signatureHeader(Buffer.from(BODY_UTF8, 'utf8'), [SECRET_A], TIMESTAMP)).toBe(
      `t=${TIMESTAMP},v1=${HEX_A_UTF8}`,
    );
  });

  it('the SDK signs exactly as the server does', () => {
    expect(signWebhook(BODY, SECRET_A, TIMESTAMP)).toBe(`t=${TIMESTAMP},v1=${HEX_A}`);
    expect(signWebhook(BODY, [SECRET_A, SECRET_B], TIMESTAMP)).toBe(
      signatureHeader(BODY, [SECRET_A, SECRET_B], TIMESTAMP),
    );
  });

  it('is signed afresh for each attempt: a new timestamp gives new signatures', () => {
    const first = parseSignatureHeader(signatureHeader(BODY, [SECRET_A], TIMESTAMP));
    const retry = parseSignatureHeader(signatureHeader(BODY, [SECRET_A], TIMESTAMP + 60));
    expect(retry?.timestampSeconds).toBe(TIMESTAMP + 60);
    expect(retry?.signatures[0]).not.toBe(first?.signatures[0]);
    expect(unixSeconds(new Date(NOW_MS + 999))).toBe(TIMESTAMP);
  });

  it('refuses to sign without a secret, with too many, or with a timestamp that is not whole seconds', () => {
    expect(() => signatureHeader(BODY, [], TIMESTAMP)).toThrow(RangeError);
    expect(() => signatureHeader(BODY, [''], TIMESTAMP)).toThrow(RangeError);
    const many = Array.from({ length: WEBHOOK_SIGNING_SECRETS_MAX + 1 }, () => SECRET_A);
    expect(() => signatureHeader(BODY, many, TIMESTAMP)).toThrow(RangeError);
    expect(() => signatureHeader(BODY, [SECRET_A], TIMESTAMP + 0.5)).toThrow(RangeError);
    expect(() => signatureHeader(BODY, [SECRET_A], -1)).toThrow(RangeError);
  });

  it('names the headers as the interface does', () => {
    expect(WEBHOOK_SIGNATURE_HEADER).toBe('Service-Signature');
    expect(WEBHOOK_EVENT_ID_HEADER).toBe('Service-Event-Id');
  });
});

describe("Stripe's own verifier (stripe-node webhooks.constructEvent)", () => {
  it('accepts our header value for the fixed vector and returns the event', () => {
    const header = signatureHeader(BODY, [SECRET_A], TIMESTAMP);
    const event = stripe.webhooks.constructEvent(BODY, header, SECRET_A, TOLERANCE, undefined, NOW_MS);
    expect(event.id).toBe('evt_01jcz3m5e7x8y9a0b1c2d3e4f5');
    expect(
      stripe.webhooks.constructEvent(Buffer.from(BODY), header, SECRET_A, TOLERANCE, undefined, NOW_MS).id,
    ).toBe('evt_01jcz3m5e7x8y9a0b1c2d3e4f5');
  });

  it('accepts a header signed now, on its default tolerance and clock', () => {
    const secret = formatWebhookSecret(randomBytes(WEBHOOK_SECRET_RANDOM_BYTES));
    const header = signatureHeader(BODY_UTF8, [secret], unixSeconds(new Date()));
    expect(stripe.webhooks.constructEvent(BODY_UTF8, header, secret).id).toBe(
      'evt_01jcz3m5e7x8y9a0b1c2d3e4f5',
    );
  });

  it('accepts a rotation header with either secret, and refuses a third', () => {
    const header = signatureHeader(BODY, [SECRET_A, SECRET_B], TIMESTAMP);
    for (const secret of [SECRET_A, SECRET_B]) {
      expect(stripe.webhooks.constructEvent(BODY, header, secret, TOLERANCE, undefined, NOW_MS).type).toBe(
        'transfer.settled',
      );
    }
    const other = formatWebhookSecret(randomBytes(WEBHOOK_SECRET_RANDOM_BYTES));
    expect(() => stripe.webhooks.constructEvent(BODY, header, other, TOLERANCE, undefined, NOW_MS)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
  });

  it('refuses what we refuse: a tampered body, a wrong secret, a stale timestamp', () => {
    const header = signatureHeader(BODY, [SECRET_A], TIMESTAMP);
    const tampered = BODY.replace('settled', 'failed');
    expect(() =>
      stripe.webhooks.constructEvent(tampered, header, SECRET_A, TOLERANCE, undefined, NOW_MS),
    ).toThrow(/No signatures found matching/);
    expect(() =>
      stripe.webhooks.constructEvent(BODY, header, SECRET_B, TOLERANCE, undefined, NOW_MS),
    ).toThrow(/No signatures found matching/);
    const late = NOW_MS + (TOLERANCE + 1) * 1000;
    expect(() => stripe.webhooks.constructEvent(BODY, header, SECRET_A, TOLERANCE, undefined, late)).toThrow(
      /tolerance/,
    );
  });

  it("builds the same header as Stripe's test helper, which our verifiers accept", () => {
    const stripeHeader = stripe.webhooks.generateTestHeaderString({
      payload: BODY,
      secret: SECRET_A,
      timestamp: TIMESTAMP,
    });
    expect(stripeHeader).toBe(signatureHeader(BODY, [SECRET_A], TIMESTAMP));
    expect(sdkVerdict(BODY, headersFor(stripeHeader), SECRET_A)).toBe('ok');
    expect(domainVerdict(BODY, stripeHeader, [SECRET_A])).toBe('ok');
  });
});

describe('verifying (the SDK, and the domain verifier beside it)', () => {
  const header = signatureHeader(BODY, [SECRET_A], TIMESTAMP);

  it('returns the parsed event of an authentic delivery', () => {
    const event = verifyWebhook(BODY, headersFor(header), SECRET_A, { now: NOW_MS });
    expect(event).toEqual(JSON.parse(BODY));
    expect(event.data.ledger_state).toBe('posted');
    expect(verifyWebhook(Buffer.from(BODY), headersFor(header), SECRET_A, { now: new Date(NOW_MS) }).id).toBe(
      event.id,
    );
    expect(domainVerdict(BODY, header, [SECRET_A])).toBe('ok');
  });

  it('refuses a tampered body: any changed, added or removed byte', () => {
    const tampered = [
      BODY.replace('"settled"', '"failed"'),
      BODY.replace('posted', 'postee'),
      `${BODY} `,
      `${BODY}\n`,
      BODY.slice(0, -1),
      JSON.stringify(JSON.parse(BODY), null, 2),
    ];
    for (const body of tampered) {
      expect(sdkVerdict(body, headersFor(header), SECRET_A)).toBe('no_matching_signature');
      expect(domainVerdict(body, header, [SECRET_A])).toBe('no_matching_signature');
    }
  });

  it('refuses a changed timestamp or signature in the header', () => {
    const shifted = header.replace(`t=${TIMESTAMP}`, `t=${TIMESTAMP + 1}`);
    const flipped = header.replace(/.$/, (c) => (c === '0' ? '1' : '0'));
    const upper = header.replace(HEX_A, HEX_A.toUpperCase());
    for (const value of [shifted, flipped, upper]) {
      expect(sdkVerdict(BODY, headersFor(value), SECRET_A)).toBe('no_matching_signature');
      expect(domainVerdict(BODY, value, [SECRET_A])).toBe('no_matching_signature');
    }
  });

  it('refuses a wrong secret, including one that differs only by whitespace or case', () => {
    for (const secret of [
      SECRET_B,
      `${SECRET_A}\n`,
      ` ${SECRET_A}`,
      SECRET_A.toUpperCase(),
      SECRET_A.slice(6),
    ]) {
      expect(sdkVerdict(BODY, headersFor(header), secret)).toBe('no_matching_signature');
      expect(domainVerdict(BODY, header, [secret])).toBe('no_matching_signature');
    }
  });

  it('refuses stale and future timestamps outside the tolerance, accepting its edges', () => {
    const at = (offsetSeconds: number) => ({ now: NOW_MS + offsetSeconds * 1000 });
    expect(sdkVerdict(BODY, headersFor(header), SECRET_A, at(TOLERANCE))).toBe('ok');
    expect(sdkVerdict(BODY, headersFor(header), SECRET_A, at(-TOLERANCE))).toBe('ok');
    expect(sdkVerdict(BODY, headersFor(header), SECRET_A, at(TOLERANCE + 1))).toBe(
      'timestamp_outside_tolerance',
    );
    expect(sdkVerdict(BODY, headersFor(header), SECRET_A, at(-(TOLERANCE + 1)))).toBe(
      'timestamp_outside_tolerance',
    );
    expect(sdkVerdict(BODY, headersFor(header), SECRET_A, at(86_400))).toBe('timestamp_outside_tolerance');
    expect(
      sdkVerdict(BODY, headersFor(header), SECRET_A, { now: NOW_MS + 61_000, toleranceSeconds: 60 }),
    ).toBe('timestamp_outside_tolerance');
    expect(
      sdkVerdict(BODY, headersFor(header), SECRET_A, { now: NOW_MS + 59_000, toleranceSeconds: 60 }),
    ).toBe('ok');
    expect(domainVerdict(BODY, header, [SECRET_A], TIMESTAMP + TOLERANCE)).toBe('ok');
    expect(domainVerdict(BODY, header, [SECRET_A], TIMESTAMP + TOLERANCE + 1)).toBe(
      'timestamp_outside_tolerance',
    );
    expect(domainVerdict(BODY, header, [SECRET_A], TIMESTAMP - TOLERANCE - 1)).toBe(
      'timestamp_outside_tolerance',
    );
  });

  it('uses the system clock by default, with a 300 s tolerance', () => {
    const fresh = signatureHeader(BODY, [SECRET_A], unixSeconds(new Date()));
    expect(sdkVerdict(BODY, headersFor(fresh), SECRET_A, {})).toBe('ok');
    expect(sdkVerdict(BODY, headersFor(header), SECRET_A, {})).toBe('timestamp_outside_tolerance');
    const nearlyStale = signatureHeader(BODY, [SECRET_A], unixSeconds(new Date()) - 280);
    expect(sdkVerdict(BODY, headersFor(nearlyStale), SECRET_A, {})).toBe('ok');
  });

  it('reports a forged stale delivery as a signature failure, not a timestamp one', () => {
    const forged = `t=${TIMESTAMP - 10_000},v1=${'0'.repeat(64)}`;
    expect(sdkVerdict(BODY, headersFor(forged), SECRET_A)).toBe('no_matching_signature');
    expect(domainVerdict(BODY, forged, [SECRET_A])).toBe('no_matching_signature');
  });

  it('rotation: a header with two v1 verifies with either secret, and a receiver may hold both', () => {
    const rotating = signatureHeader(BODY, [SECRET_A, SECRET_B], TIMESTAMP);
    const third = formatWebhookSecret(randomBytes(WEBHOOK_SECRET_RANDOM_BYTES));
    expect(sdkVerdict(BODY, headersFor(rotating), SECRET_A)).toBe('ok');
    expect(sdkVerdict(BODY, headersFor(rotating), SECRET_B)).toBe('ok');
    expect(sdkVerdict(BODY, headersFor(rotating), third)).toBe('no_matching_signature');
    expect(sdkVerdict(BODY, headersFor(rotating), [third, SECRET_B])).toBe('ok');
    // The receiver holds old and new while the sender has moved to the new one only, and before it has.
    const newOnly = signatureHeader(BODY, [SECRET_B], TIMESTAMP);
    const oldOnly = signatureHeader(BODY, [SECRET_A], TIMESTAMP);
    expect(sdkVerdict(BODY, headersFor(newOnly), [SECRET_A, SECRET_B])).toBe('ok');
    expect(sdkVerdict(BODY, headersFor(oldOnly), [SECRET_A, SECRET_B])).toBe('ok');
    expect(sdkVerdict(BODY, headersFor(newOnly), [SECRET_A, third])).toBe('no_matching_signature');
    expect(domainVerdict(BODY, rotating, [SECRET_B])).toBe('ok');
    expect(domainVerdict(BODY, newOnly, [third, SECRET_A])).toBe('no_matching_signature');
  });

  it('ignores signatures of other schemes, as Stripe does', () => {
    const withV0 = `t=${TIMESTAMP},v0=${'f'.repeat(64)},v1=${HEX_A}`;
    expect(sdkVerdict(BODY, headersFor(withV0), SECRET_A)).toBe('ok');
    const v0Only = `t=${TIMESTAMP},v0=${HEX_A}`;
    expect(sdkVerdict(BODY, headersFor(v0Only), SECRET_A)).toBe('malformed_header');
  });

  it('refuses an unsigned delivery and a malformed header', () => {
    expect(sdkVerdict(BODY, {}, SECRET_A)).toBe('missing_header');
    expect(sdkVerdict(BODY, { 'service-signature': '' }, SECRET_A)).toBe('missing_header');
    expect(sdkVerdict(BODY, { 'service-signature': undefined }, SECRET_A)).toBe('missing_header');
    expect(sdkVerdict(BODY, { 'stripe-signature': header }, SECRET_A)).toBe('missing_header');
    expect(domainVerdict(BODY, undefined, [SECRET_A])).toBe('missing_header');
    const malformed = [
      `v1=${HEX_A}`,
      `t=${TIMESTAMP}`,
      `t=abc,v1=${HEX_A}`,
      `t=-5,v1=${HEX_A}`,
      `t=1.5,v1=${HEX_A}`,
      `t=${TIMESTAMP},t=${TIMESTAMP},v1=${HEX_A}`,
      `t=${TIMESTAMP};v1=${HEX_A}`,
      'sha256=abc',
      'garbage',
    ];
    for (const value of malformed) {
      expect(sdkVerdict(BODY, headersFor(value), SECRET_A), value).toBe('malformed_header');
      expect(domainVerdict(BODY, value, [SECRET_A]), value).toBe('malformed_header');
    }
  });

  it('tolerates spaces after commas, and refuses signatures of the wrong length without throwing', () => {
    expect(sdkVerdict(BODY, headersFor(`t=${TIMESTAMP}, v1=${HEX_A}`), SECRET_A)).toBe('ok');
    for (const v1 of ['', 'abc', `${HEX_A}00`, HEX_A.slice(2), 'ü'.repeat(64)]) {
      expect(sdkVerdict(BODY, headersFor(`t=${TIMESTAMP},v1=${v1}`), SECRET_A)).toBe('no_matching_signature');
      expect(domainVerdict(BODY, `t=${TIMESTAMP},v1=${v1}`, [SECRET_A])).toBe('no_matching_signature');
    }
  });

  it('reads headers in any case, from a plain object, an array value or a Fetch Headers', () => {
    expect(sdkVerdict(BODY, { 'Service-Signature': header }, SECRET_A)).toBe('ok');
    expect(sdkVerdict(BODY, { 'SERVICE-SIGNATURE': header }, SECRET_A)).toBe('ok');
    expect(sdkVerdict(BODY, { 'service-signature': [header] }, SECRET_A)).toBe('ok');
    expect(sdkVerdict(BODY, { 'service-signature': [header, header] }, SECRET_A)).toBe('ok');
    const other = signatureHeader(BODY, [SECRET_B], TIMESTAMP);
    expect(sdkVerdict(BODY, { 'service-signature': [header, other] }, SECRET_A)).toBe('malformed_header');
    expect(sdkVerdict(BODY, new Headers({ 'Service-Signature': header }), SECRET_A)).toBe('ok');
    expect(sdkVerdict(BODY, new Headers(), SECRET_A)).toBe('missing_header');
  });

  it('refuses an authentic body that is not an event, or a Service-Event-Id that is not its id', () => {
    const notJson = 'not json';
    expect(sdkVerdict(notJson, headersFor(signatureHeader(notJson, [SECRET_A], TIMESTAMP)), SECRET_A)).toBe(
      'invalid_payload',
    );
    const array = '[1,2]';
    expect(sdkVerdict(array, headersFor(signatureHeader(array, [SECRET_A], TIMESTAMP)), SECRET_A)).toBe(
      'invalid_payload',
    );
    expect(sdkVerdict(BODY, headersFor(header, 'evt_01jcz3m5e7x8y9a0b1c2d3e4f6'), SECRET_A)).toBe(
      'invalid_payload',
    );
    expect(sdkVerdict(BODY, { 'service-signature': header }, SECRET_A)).toBe('ok');
  });

  it('refuses to run without a secret, with a bad tolerance, or on a parsed body', () => {
    const headers = headersFor(header);
    expect(() => verifyWebhook(BODY, headers, [])).toThrow(TypeError);
    expect(() => verifyWebhook(BODY, headers, '')).toThrow(TypeError);
    expect(() => verifyWebhook(BODY, headers, SECRET_A, { toleranceSeconds: -1 })).toThrow(TypeError);
    expect(() => verifyWebhook(BODY, headers, SECRET_A, { toleranceSeconds: Number.NaN })).toThrow(TypeError);
    expect(() => verifyWebhook(JSON.parse(BODY), headers, SECRET_A)).toThrow(/raw request body/);
    expect(() => verifySignatureHeader(BODY, header, [], TIMESTAMP)).toThrow(RangeError);
  });

  it('the error says why', () => {
    try {
      verifyWebhook(BODY, headersFor(header), SECRET_B, { now: NOW_MS });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(WebhookVerificationError);
      expect(error).toBeInstanceOf(Error);
      expect((error as WebhookVerificationError).name).toBe('WebhookVerificationError');
      expect((error as WebhookVerificationError).reason).toBe('no_matching_signature');
      expect((error as Error).message).toMatch(/raw body/);
    }
  });

  it('the server and the SDK agree on random secrets, bodies, times and tampering', () => {
    for (let i = 0; i < 200; i++) {
      const secrets = [formatWebhookSecret(randomBytes(32)), formatWebhookSecret(randomBytes(32))];
      const body = JSON.stringify({
        id: `evt_${i}`,
        type: 'transfer.created',
        data: randomBytes(24).toString('base64'),
      });
      const timestamp = TIMESTAMP + (i % 7) * 1000;
      const signed = signatureHeader(body, secrets.slice(0, 1 + (i % 2)), timestamp);
      const nowSeconds = timestamp + ((i * 37) % 700) - 350;
      const receiverSecrets =
        i % 3 === 0 ? [formatWebhookSecret(randomBytes(32))] : [secrets[i % 2] as string];
      const receivedBody = i % 5 === 0 ? `${body} ` : body;
      const expected = domainVerdict(receivedBody, signed, receiverSecrets, nowSeconds);
      expect(
        sdkVerdict(receivedBody, headersFor(signed, `evt_${i}`), receiverSecrets, { now: nowSeconds * 1000 }),
      ).toBe(expected);
    }
  });
});
