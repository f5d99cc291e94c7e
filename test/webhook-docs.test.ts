/**
 * docs/WEBHOOKS.md against the code: its worked signature example, its payload examples in both
 * spellings, its event types and its retry schedule must be what the code does, so the page cannot drift.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, eventEnvelope, transferEventData } from '../src/domain/events.ts';
import { parseAmount } from '../src/domain/money.ts';
import { PAYLOAD_CHANGES, PAYLOAD_VERSIONS } from '../src/domain/payloadVersions.ts';
import { formatWebhookSecret, signatureHeader, verifySignatureHeader } from '../src/domain/signing.ts';
import type { Transfer } from '../src/domain/transferRecord.ts';
import { toCamelCase, WEBHOOK_RETRY_SCHEDULE_SECONDS_DEFAULT } from '../src/domain/webhooks.ts';

const page = readFileSync(new URL('../docs/WEBHOOKS.md', import.meta.url), 'utf8');

function match(pattern: RegExp, what: string): string {
  const found = page.match(pattern)?.[1];
  if (found === undefined) throw new Error(`docs/WEBHOOKS.md has no ${what} (${pattern})`);
  return found;
}

const secret = match(/^secret: +(whsec_\S+)$/m, 'example secret');
const timestamp = Number(match(/^timestamp: +(\d+)$/m, 'example timestamp'));
const rawBody = match(/^Raw body[^\n]*\n\n```text\n(.*)\n```$/m, 'raw body');
const header = match(/the header is:\n\n```\nService-Signature: (\S+)\n```/, 'example header');
const jsonBlocks = [...page.matchAll(/```json\n(\{\n[\s\S]*?\n\})\n```/g)].map((m) =>
  JSON.parse(m[1] as string),
);

describe('docs/WEBHOOKS.md', () => {
  it('the worked example is the signature the code computes, and verifies', () => {
    expect(secret).toBe(formatWebhookSecret(Uint8Array.from({ length: 32 }, (_, i) => i)));
    expect(signatureHeader(rawBody, [secret], timestamp)).toBe(header);
    expect(verifySignatureHeader(rawBody, header, [secret], timestamp)).toEqual({
      ok: true,
      timestampSeconds: timestamp,
    });
    // The delivery shown and the openssl line carry the same signature.
    const v1 = header.replace(/^t=\d+,v1=/, '');
    expect(page).toContain(`Service-Signature: t=${timestamp},v1=${v1}\n\n{"id":`);
    expect(page).toContain(`# SHA2-256(stdin)= ${v1}`);
    expect(page).toContain(`printf '${timestamp}.'`);
    expect(page).toContain(`-hmac '${secret}'`);
  });

  it('the payload examples are the envelope the code renders, in both spellings', () => {
    const event = JSON.parse(rawBody);
    expect(jsonBlocks).toEqual([event, toCamelCase(event)]);
    const transfer = {
      id: event.data.transfer_id,
      organizationId: 'org_x',
      status: 'settled',
      rail: 'mobile_money',
      ledgerState: 'posted',
      amountMinor: 150_000n,
      fee: { feeMinor: parseAmount(event.data.fee, 'KES'), scheduleVersion: 2, rule: 'mobile_money_kes' },
      currency: 'KES',
      direction: 'outbound',
      sourceWalletId: event.data.source,
      destination: event.data.destination,
      failureCode: null,
      metadata: event.data.metadata,
    } as unknown as Transfer;
    const rendered = eventEnvelope(
      {
        id: event.id,
        organizationId: 'org_x',
        type: event.type,
        resourceId: transfer.id,
        data: transferEventData(transfer),
        createdAt: new Date(event.created_at),
      },
      'sandbox',
    );
    // Byte for byte, field order included: the example is what a delivery of this event would carry.
    expect(JSON.stringify(rendered)).toBe(rawBody);
  });

  it('lists every event type', () => {
    for (const type of EVENT_TYPES) expect(page).toContain(`| \`${type}\``);
  });

  it('lists each event type once, and nothing the registry does not know', () => {
    const listed = [...page.matchAll(/^\| `([a-z_.]+)` +\|/gm)].map((m) => m[1] as string);
    const eventRows = listed.filter((name) => name.includes('.'));
    expect([...eventRows].sort()).toEqual([...EVENT_TYPES].sort());
  });

  it('lists every payload version, each breaking change with the version that made it', () => {
    const rows = [...page.matchAll(/^\| `(\d{4}-\d{2}-\d{2})` +\|/gm)].map((m) => m[1]);
    expect(rows).toEqual([...PAYLOAD_VERSIONS].reverse());
    expect(PAYLOAD_CHANGES.map((change) => change.version)).toEqual(rows.slice(0, -1));
  });

  it('shows the default retry schedule', () => {
    const rows = [...page.matchAll(/^\| (\d+) +\| (\d+) +\|/gm)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(rows.map(([, seconds]) => seconds)).toEqual([...WEBHOOK_RETRY_SCHEDULE_SECONDS_DEFAULT]);
    expect(rows.map(([attempt]) => attempt)).toEqual(
      WEBHOOK_RETRY_SCHEDULE_SECONDS_DEFAULT.map((_, i) => i + 2),
    );
    expect(page).toContain(`That is ${WEBHOOK_RETRY_SCHEDULE_SECONDS_DEFAULT.length + 1} attempts`);
  });
});
