/**
 * Counter rows (pilot caps here; customer limit sums and evidence chain heads are locked the same way), on a
 * real database: locking a row that exists writes no new version of it, a row that does not exist yet is
 * created at zero, and a transaction that waited for another's lock reads the sums that one committed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockPilotUsage, savePilotUsage } from '../src/store/repositories/pilotCapUsage.ts';
import { BACKENDS, openTestDatabase, type TestDatabase } from './support/harness.ts';

const ORGANIZATION = 'org_counter_rows';
const key = (day: string) => ({ organizationId: ORGANIZATION, currency: 'KES', day });

describe.each(BACKENDS)('counter rows on %s', (backend) => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await openTestDatabase(backend);
    await database.store.query('INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, now())', [
      ORGANIZATION,
      'Counter rows',
    ]);
  });
  afterAll(async () => {
    await database?.close();
  });

  const versionOf = async (day: string) => {
    const [row] = await database.store.query<{ version: string }>(
      'SELECT xmin::text AS version FROM pilot_cap_usage WHERE organization_id = $1 AND day = $2',
      [ORGANIZATION, day],
    );
    return row?.version;
  };

  it('creates a missing row at zero, and locks an existing one without writing a new version of it', async () => {
    const created = await database.store.transaction((tx) => lockPilotUsage(tx, [key('2026-12-01')]));
    expect([...created.values()]).toEqual([{ ...key('2026-12-01'), transferCount: 0, sentMinor: 0n }]);
    const before = await versionOf('2026-12-01');
    expect(before).toBeDefined();
    await database.store.transaction((tx) => lockPilotUsage(tx, [key('2026-12-01'), key('2026-12-02')]));
    expect(await versionOf('2026-12-01')).toBe(before);
    expect(await versionOf('2026-12-02')).toBeDefined();
  });

  it('a transaction that waited for the lock reads what the holder committed', async () => {
    let locked!: () => void;
    const holderLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = database.store.transaction(async (tx) => {
      const [usage] = [...(await lockPilotUsage(tx, [key('2026-12-03')])).values()];
      locked();
      // Long enough for the other transaction to be waiting on the row.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await savePilotUsage(tx, [
        { ...key('2026-12-03'), transferCount: 1, sentMinor: (usage?.sentMinor ?? 0n) + 500n },
      ]);
    });
    await holderLocked;
    const waiter = database.store.transaction(async (tx) => [
      ...(await lockPilotUsage(tx, [key('2026-12-03')])).values(),
    ]);
    await holder;
    expect(await waiter).toEqual([{ ...key('2026-12-03'), transferCount: 1, sentMinor: 500n }]);
  });
});
