/** `mkoba evidence verify` as a command: exit 0 with every chain intact, 1 naming the first broken record. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TEST_DATABASE_URL, type TestApp } from '../support/harness.ts';
import { E2E_TEST_TIMEOUT_MS, mkobaEnv, runMkoba } from './mkobaProcess.ts';

describe.runIf(TEST_DATABASE_URL)('mkoba evidence verify as a command', () => {
  let t: TestApp;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    // The sandbox seed records its customers' verifications and screenings: a chain to check.
    t = await startTestApp('postgres');
    const url = t.db.url as string;
    env = mkobaEnv({ DATABASE_URL: url, MKOBA_ENCRYPTION_KEY: t.encryptionKey });
  });
  afterAll(() => t.close());

  it('exits 0 when every chain is intact and 1 naming the first broken record when one is altered', {
    timeout: E2E_TEST_TIMEOUT_MS,
  }, async () => {
    const intact = await runMkoba(['evidence', 'verify'], env);
    expect(intact.stderr).toMatch(/evidence verify: 1 chain\(s\), \d+ record\(s\), all intact/);
    expect(intact.code).toBe(0);

    const [record] = await t.db.store.query<{ id: string; sequence: string }>(
      'SELECT id, sequence FROM evidence_records WHERE organization_id = $1 ORDER BY sequence LIMIT 1 OFFSET 1',
      [t.organizationId],
    );
    await t.db.store.transaction(async (tx) => {
      await tx.exec('ALTER TABLE evidence_records DISABLE TRIGGER evidence_records_append_only');
      await tx.query("UPDATE evidence_records SET payload = payload || ' ' WHERE id = $1", [record?.id]);
      await tx.exec('ALTER TABLE evidence_records ENABLE TRIGGER evidence_records_append_only');
    });
    const broken = await runMkoba(['evidence', 'verify'], env);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain(`${t.organizationId}: broken at sequence 2 (${record?.id})`);
    expect(broken.stderr).toContain('1 of 1 chain(s) broken');
  });
});
