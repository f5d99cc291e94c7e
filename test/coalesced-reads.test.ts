/**
 * Reads shared by concurrent requests (src/store/coalescedReads.ts): keys asked for while a read is in flight
 * go out together in the next, and a wallet read in the same statement as another organization's request is
 * still only its own organization's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COALESCED_READ_KEYS_MAX, coalescedReader } from '../src/store/coalescedReads.ts';
import { api, BACKENDS, newOrganizationKey, startTestApp, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet } from './support/ledger.ts';

/** A reader over a table in memory that records the keys of every read and answers when told to. */
function recordedReader(table: ReadonlyMap<string, string>) {
  const reads: string[][] = [];
  const waiting: (() => void)[] = [];
  let failNext = false;
  const read = coalescedReader<string>(async (keys) => {
    reads.push([...keys]);
    await new Promise<void>((resolve) => waiting.push(resolve));
    if (failNext) {
      failNext = false;
      throw new Error('database unavailable');
    }
    return new Map(keys.flatMap((key) => (table.has(key) ? [[key, table.get(key) as string]] : [])));
  });
  return {
    read,
    reads,
    failNext: () => {
      failNext = true;
    },
    /** Lets the oldest waiting read answer, once it has been sent. */
    async answer() {
      for (let turn = 0; turn < 100 && waiting.length === 0; turn++) await new Promise(setImmediate);
      waiting.shift()?.();
    },
  };
}

describe('coalescedReader', () => {
  const table = new Map([
    ['a', 'A'],
    ['b', 'B'],
    ['c', 'C'],
    ['d', 'D'],
  ]);

  it('sends the keys asked for while a read is in flight together, in the next read', async () => {
    const reader = recordedReader(table);
    const first = reader.read('a');
    await reader.answer();
    expect(await first).toBe('A');
    const second = reader.read('b');
    // Asked for while `b`'s read is in flight: they wait for it, then go out as one read.
    for (let turn = 0; turn < 5; turn++) await new Promise(setImmediate);
    const later = [reader.read('c'), reader.read('missing'), reader.read('d')];
    await reader.answer();
    expect(await second).toBe('B');
    await reader.answer();
    expect(await Promise.all(later)).toEqual(['C', undefined, 'D']);
    expect(reader.reads).toEqual([['a'], ['b'], ['c', 'missing', 'd']]);
  });

  it('fails every key of a failed read, and reads the next keys afresh', async () => {
    const reader = recordedReader(table);
    reader.failNext();
    const failed = [reader.read('a'), reader.read('b')];
    await reader.answer();
    for (const result of await Promise.allSettled(failed)) expect(result.status).toBe('rejected');
    const next = reader.read('c');
    await reader.answer();
    expect(await next).toBe('C');
    expect(reader.reads).toEqual([['a', 'b'], ['c']]);
  });

  it(`splits more than ${COALESCED_READ_KEYS_MAX} keys over reads of at most that many`, async () => {
    const reads: number[] = [];
    const read = coalescedReader<string>(async (keys) => {
      reads.push(keys.length);
      return new Map(keys.map((key) => [key, key]));
    });
    const keys = Array.from({ length: COALESCED_READ_KEYS_MAX + 7 }, (_, i) => `k${i}`);
    expect(await Promise.all(keys.map((key) => read(key)))).toEqual(keys);
    expect(reads).toEqual([COALESCED_READ_KEYS_MAX, 7]);
  });
});

describe.each(BACKENDS)('wallets read together for concurrent transfers (%s)', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers each organization with its own wallets only, when their reads share a statement', async () => {
    const otherKey = await newOrganizationKey(t);
    const ours = await Promise.all(Array.from({ length: 6 }, () => fundedWallet(t, '100.00')));
    const theirs = await fundedWallet(t, '100.00', 'KES', otherKey);
    const transfer = (key: string, source: string, destination: string, n: number) =>
      api(t, 'POST', '/v1/transfers', {
        key,
        body: { source, destination, amount: '1.00', currency: 'KES' },
        headers: { 'idempotency-key': `coalesced-${n}` },
      });
    // The other organization names our wallets, as source and as destination, among our own transfers.
    const answers = await Promise.all([
      ...ours.map((source, i) => transfer(t.key, source, ours[(i + 1) % ours.length] as string, i)),
      transfer(otherKey, ours[0] as string, theirs, 100),
      transfer(otherKey, theirs, ours[1] as string, 101),
    ]);
    for (const answer of answers.slice(0, ours.length)) expect(answer.statusCode, answer.body).toBe(201);
    const [stolen, sentAcross] = answers.slice(ours.length);
    expect(stolen?.statusCode, stolen?.body).toBe(404);
    expect(stolen?.data).toMatchObject({ code: 'resource_missing', param: 'source' });
    expect(sentAcross?.statusCode, sentAcross?.body).toBe(404);
    expect(sentAcross?.data).toMatchObject({ code: 'resource_missing', param: 'destination' });
    const balance = await api(t, 'GET', `/v1/wallets/${theirs}/balance`, { key: otherKey });
    expect(balance.data.available).toBe('100.00');
    await expectLedgerHealthy(t);
  });
});
