/**
 * The event stream after the failover: every event of the outbox (the test's own database, so every one of
 * its organizations) is in the test's JetStream stream, de-duplicated by Nats-Msg-Id, in commit order per
 * organization (the outbox's (transaction, event id) order), and every organization's cursor stands at its
 * last event with no lease left past its expiry: the publishers came back by themselves.
 */
import type pg from 'pg';
import { expect } from 'vitest';
import { readStream, type StoredMessage } from '../../support/nats.ts';
import { sleep } from './daemon.ts';

const POLL_INTERVAL_MS = 500;

export interface StreamFigures {
  events: number;
  /** Messages the stream holds beyond one per event (repeats JetStream did not drop). */
  repeats: number;
  /** The longest an event waited between its commit (`created_at`) and the stream storing it. */
  slowestPublishMs: number;
}

/** The outbox's event ids per organization, in commit order. */
async function outboxOrder(db: pg.Client): Promise<Map<string, string[]>> {
  const rows = await db.query<{ id: string; organization_id: string }>(
    'SELECT id, organization_id FROM events ORDER BY organization_id, transaction_id, id',
  );
  const order = new Map<string, string[]>();
  for (const row of rows.rows) {
    const ids = order.get(row.organization_id) ?? [];
    ids.push(row.id);
    order.set(row.organization_id, ids);
  }
  return order;
}

/** The stream's messages per organization (the subject's second token), first of each Nats-Msg-Id only. */
function streamOrder(messages: StoredMessage[], prefix: string): Map<string, StoredMessage[]> {
  const seen = new Set<string>();
  const order = new Map<string, StoredMessage[]>();
  for (const message of messages) {
    expect(message.subject.startsWith(`${prefix}.`)).toBe(true);
    expect(message.messageId).toBe(message.body.id);
    if (seen.has(message.body.id)) continue;
    seen.add(message.body.id);
    const organization = message.subject.split('.')[1] as string;
    order.set(organization, [...(order.get(organization) ?? []), message]);
  }
  return order;
}

function sameOrder(outbox: Map<string, string[]>, stream: Map<string, StoredMessage[]>): boolean {
  if (outbox.size !== stream.size) return false;
  for (const [organization, ids] of outbox) {
    const streamed = (stream.get(organization) ?? []).map((m) => m.body.id);
    if (streamed.join() !== ids.join()) return false;
  }
  return true;
}

/** Waits up to `waitMs` for the stream to hold the whole outbox in order, then checks the cursors. */
export async function expectOutboxInStream(
  db: pg.Client,
  nats: { url: string; stream: string; prefix: string },
  waitMs: number,
): Promise<StreamFigures> {
  const deadline = Date.now() + waitMs;
  let outbox = await outboxOrder(db);
  let messages = await readStream(nats.url, nats.stream);
  while (!sameOrder(outbox, streamOrder(messages, nats.prefix)) && Date.now() < deadline) {
    await sleep(POLL_INTERVAL_MS);
    outbox = await outboxOrder(db);
    messages = await readStream(nats.url, nats.stream);
  }
  const stream = streamOrder(messages, nats.prefix);
  for (const [organization, ids] of outbox) {
    expect(
      (stream.get(organization) ?? []).map((m) => m.body.id),
      organization,
    ).toEqual(ids);
  }
  expect([...stream.keys()].sort()).toEqual([...outbox.keys()].sort());

  const cursors = await db.query<{ organization_id: string; event_id: string | null; stale: boolean }>(
    `SELECT organization_id, event_id, (lease_owner IS NOT NULL AND lease_expires_at < now()) AS stale
       FROM event_stream_cursors WHERE stream = $1`,
    [nats.stream],
  );
  for (const [organization, ids] of outbox) {
    const cursor = cursors.rows.find((c) => c.organization_id === organization);
    expect(cursor?.event_id, organization).toBe(ids.at(-1));
    expect(cursor?.stale, organization).toBe(false);
  }
  const delays = [...stream.values()].flat().map((m) => m.storedAt - Date.parse(String(m.body.created_at)));
  return {
    events: [...outbox.values()].reduce((n, ids) => n + ids.length, 0),
    repeats: messages.length - [...stream.values()].reduce((n, ms) => n + ms.length, 0),
    slowestPublishMs: Math.max(0, ...delays),
  };
}
