/**
 * The evidence chain: records appended by use cases are listed per resource for operators only, each one
 * re-hashable from its wire form alone; concurrent appends queue instead of forking; the database refuses
 * changes and mislinked records; `evidence verify` names the first broken record; a value that would not
 * canonicalise the same everywhere is refused, naming where it is.
 */
import { createHash, randomBytes } from 'node:crypto';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../src/app/evidence.ts';
import { chainEvidence, EVIDENCE_GENESIS_HASH, type EvidenceDraft } from '../src/domain/evidence.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import {
  api,
  BACKENDS,
  createCustomer,
  newOrganizationKey,
  startTestApp,
  type TestApp,
} from './support/harness.ts';

const APPENDS_CONCURRENT = 12;

function draft(organizationId: string, customerId: string, note: string): EvidenceDraft {
  return {
    organizationId,
    kind: 'verification.result',
    actor: SYSTEM_ACTOR,
    customerId,
    data: { note, amount: '10.00', count: 3, nested: { list: [1, 'two', null, true] } },
  };
}

async function verify(t: TestApp) {
  const result = await runAdminCommand(t.deps, { name: 'evidence.verify' });
  if (result.name !== 'evidence.verify') throw new Error('wrong result');
  return result.chains;
}

describe('evidence records', () => {
  const head = { sequence: 0, hash: EVIDENCE_GENESIS_HASH };
  // Typed loosely on purpose: the walk is the guard for values the types would let through at run time.
  const chain = (data: Record<string, unknown>) =>
    chainEvidence(
      head,
      [{ ...draft('org_1', 'cus_1', 'n'), data: data as EvidenceDraft['data'] }],
      ['evd_1'],
      new Date(0),
    );

  it('records what canonicalises the same everywhere, and names where a value would not', () => {
    expect(chain({ amount: '1.00', count: 3, list: [null, true, { deep: 'x' }] })[0]?.sequence).toBe(1);
    expect(() => chain({ list: [1, { ratio: 0.5 }] })).toThrow(
      'evidence record.data.list[1].ratio is 0.5: only safe integers (or strings) are recorded',
    );
    expect(() => chain({ big: 2 ** 60 })).toThrow(/^evidence record\.data\.big is \d+: only safe integers/);
    expect(() => chain({ missing: undefined })).toThrow(
      'evidence record.data.missing is a undefined, which JSON cannot carry',
    );
    expect(() => chain({ nested: { f: () => 1 } })).toThrow(
      'evidence record.data.nested.f is a function, which JSON cannot carry',
    );
  });
});

describe.each(BACKENDS)('evidence on %s', (backend) => {
  let t: TestApp;
  let operator: string;
  let customer: string;

  let organizationId: string;

  beforeAll(async () => {
    t = await startTestApp(backend);
    // An organization of its own: the seeded one's chain already holds the seed's verifications.
    const name = `Evidence ${randomBytes(4).toString('hex')}`;
    const issued = await issueApiKey(t.deps, { organizationName: name });
    organizationId = issued.record.organizationId;
    operator = (await issueApiKey(t.deps, { organizationName: name, scopes: ['compliance'] })).key;
    customer = await createCustomer(t, issued.key);
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists a customer’s records newest first, each re-hashable from its wire form and linked to the one before', async () => {
    await t.deps.store.transaction((tx) =>
      appendEvidence(tx, t.deps, [
        draft(organizationId, customer, 'first'),
        draft(organizationId, customer, 'second'),
      ]),
    );
    await t.deps.store.transaction((tx) =>
      appendEvidence(tx, t.deps, [draft(organizationId, customer, 'third')]),
    );
    const response = await api(t, 'GET', `/v1/customers/${customer}/evidence`, { key: operator });
    expect(response.statusCode, response.body).toBe(200);
    const records = response.data.data;
    expect(records.map((r: any) => r.data.note)).toEqual(['third', 'second', 'first']);
    expect(records.map((r: any) => r.sequence)).toEqual([3, 2, 1]);
    expect(records[2].previous_hash).toBe(EVIDENCE_GENESIS_HASH);
    for (const [i, record] of records.entries()) {
      const { object, hash, ...hashed } = record;
      expect(object).toBe('evidence');
      expect(
        createHash('sha256')
          .update(canonicalize(hashed) as string)
          .digest('hex'),
      ).toBe(hash);
      if (i > 0) expect(records[i - 1].previous_hash).toBe(hash);
      expect(record).toMatchObject({ kind: 'verification.result', actor: 'system', customer_id: customer });
    }
  });

  it('pages with starting_after', async () => {
    const first = await api(t, 'GET', `/v1/customers/${customer}/evidence?limit=2`, { key: operator });
    expect(first.data.has_more).toBe(true);
    const second = await api(
      t,
      'GET',
      `/v1/customers/${customer}/evidence?limit=2&starting_after=${first.data.next_cursor}`,
      { key: operator },
    );
    expect(second.statusCode, second.body).toBe(200);
    expect(second.data.data.map((r: any) => r.sequence)).toEqual([1]);
    expect(second.data.has_more).toBe(false);
  });

  it('is for operators: an integrator key gets 403, another organization 404, an unknown resource 404', async () => {
    const ordinary = await api(t, 'GET', `/v1/customers/${customer}/evidence`);
    expect(ordinary.statusCode).toBe(403);
    expect(ordinary.data.code).toBe('insufficient_permissions');
    const stranger = await newOrganizationKey(t, ['compliance']);
    const other = await api(t, 'GET', `/v1/customers/${customer}/evidence`, { key: stranger });
    expect(other.statusCode).toBe(404);
    const unknown = await api(t, 'GET', '/v1/transfers/tr_01jcz3m5e7x8y9a0b1c2d3e4f5/evidence', {
      key: operator,
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.data.code).toBe('resource_missing');
    const malformed = await api(t, 'GET', '/v1/wallets/nope/evidence', { key: operator });
    expect(malformed.statusCode).toBe(400);
  });

  it('concurrent appends queue on the chain head and never fork it', async () => {
    await Promise.all(
      Array.from({ length: APPENDS_CONCURRENT }, (_, i) =>
        t.deps.store.transaction((tx) =>
          appendEvidence(tx, t.deps, [draft(organizationId, customer, `race ${i}`)]),
        ),
      ),
    );
    const chains = await verify(t);
    const own = chains.find((c) => c.organizationId === organizationId);
    expect(own).toEqual({ organizationId, recordsVerified: 3 + APPENDS_CONCURRENT });
  });

  it('the database refuses changes, deletions and a record that does not link to its predecessor', async () => {
    await expect(t.deps.store.query("UPDATE evidence_records SET kind = 'x'")).rejects.toThrow(/append-only/);
    await expect(t.deps.store.query('DELETE FROM evidence_records')).rejects.toThrow(/append-only/);
    await expect(
      t.deps.store.query(
        `INSERT INTO evidence_records (id, organization_id, sequence, kind, created_at, previous_hash, payload, hash)
         VALUES ('evd_x', $1, 1000, 'wallet.freeze', now(), $2, '{}', $2)`,
        [organizationId, 'a'.repeat(64)],
      ),
    ).rejects.toThrow(/does not link/);
    // The predecessor exists, but its hash is not the one the new record names.
    const [head] = await t.deps.store.query<{ sequence: string }>(
      'SELECT max(sequence)::text AS sequence FROM evidence_records WHERE organization_id = $1',
      [organizationId],
    );
    await expect(
      t.deps.store.query(
        `INSERT INTO evidence_records (id, organization_id, sequence, kind, created_at, previous_hash, payload, hash)
         VALUES ('evd_y', $1, $2::bigint + 1, 'wallet.freeze', now(), $3, '{}', $3)`,
        [organizationId, head?.sequence, 'b'.repeat(64)],
      ),
    ).rejects.toThrow(/does not link/);
    // Checked once per statement: a record that links to one inserted beside it is accepted only when that
    // one links too, and a chain's first record must start from the genesis hash.
    const next = Number(head?.sequence) + 1;
    await expect(
      t.deps.store.query(
        `INSERT INTO evidence_records (id, organization_id, sequence, kind, created_at, previous_hash, payload, hash)
         VALUES ('evd_z1', $1, $2::bigint, 'wallet.freeze', now(), $3, '{}', $4),
                ('evd_z2', $1, $2::bigint + 1, 'wallet.freeze', now(), $4, '{}', $5)`,
        [organizationId, next, 'b'.repeat(64), 'c'.repeat(64), 'd'.repeat(64)],
      ),
    ).rejects.toThrow(/evd_z1 does not link/);
    await t.deps.store.query(
      "INSERT INTO organizations (id, name, webhook_subscriptions_enabled, created_at) VALUES ('org_evidence_genesis', 'Evidence genesis', true, now())",
    );
    await expect(
      t.deps.store.query(
        `INSERT INTO evidence_records (id, organization_id, sequence, kind, created_at, previous_hash, payload, hash)
         VALUES ('evd_g', 'org_evidence_genesis', 1, 'wallet.freeze', now(), $1, '{}', $1)`,
        ['e'.repeat(64)],
      ),
    ).rejects.toThrow(/evd_g is first in its chain but does not start from the genesis hash/);
  });

  it('evidence verify names the first broken record when a payload was altered behind the triggers', async () => {
    const [target] = await t.deps.store.query<{ id: string; sequence: string }>(
      'SELECT id, sequence FROM evidence_records WHERE organization_id = $1 AND sequence = 2',
      [organizationId],
    );
    await t.deps.store.transaction(async (tx) => {
      await tx.exec('ALTER TABLE evidence_records DISABLE TRIGGER evidence_records_append_only');
      await tx.query(
        `UPDATE evidence_records SET payload = replace(payload, '"second"', '"altered"') WHERE id = $1`,
        [target?.id],
      );
      await tx.exec('ALTER TABLE evidence_records ENABLE TRIGGER evidence_records_append_only');
    });
    const own = (await verify(t)).find((c) => c.organizationId === organizationId);
    expect(own?.break).toEqual({
      recordId: target?.id,
      sequence: 2,
      reason: 'the payload does not hash to the stored hash',
    });
    expect(own?.recordsVerified).toBe(1);
  });
});
