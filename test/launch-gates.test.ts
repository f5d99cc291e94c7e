/**
 * Launch gates through HTTP: every gate of a product starts open and passes by doing the real thing in the
 * sandbox (contacts named, the legal entity's KYB verified, a policy written, a signed test event
 * acknowledged, the scenario's settle, fail, time-out and return, a statement reconciled), each change
 * with its `launch_gate.updated` event and evidence record. A pilot deployment linked to that sandbox
 * refuses keys naming the open gates (and, for a key that moves money, a product whose rails no partner
 * carries in the pilot), issues `sk_pilot_` keys once they pass, and records an operator's override as evidence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import { defaultWebhookSettings } from '../src/config/webhooks.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { LAUNCH_GATES } from '../src/modules/launchGates/domain.ts';
import { LaunchGatesOpenError } from '../src/modules/launchGates/useCases.ts';
import { launchGateWalker } from '../src/modules/launchGates/workers.ts';
import { dispatchWebhooksOnce } from '../src/modules/webhooks/workers/dispatcher.ts';
import { httpWebhookSender } from '../src/modules/webhooks/workers/httpSender.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { drainRails, expectLedgerHealthy, fundedWallet, mobilePayout } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';
import { type Receiver, startReceiver } from './support/receiver.ts';

/** The provider gate's refusal for a mobile-money organization with no partner in the pilot. */
const NO_MOBILE_MONEY_PROVIDER =
  'mobile_money/rail_providers_configured (missing: mobile_money (mpesa_daraja or mtn_momo))';

const today = () => new Date().toISOString().slice(0, 10);

const CONTACTS = [
  { role: 'technical', name: 'Wanjiru Kamau', email: 'Tech@Example.com', phone: '+254711000001' },
  { role: 'compliance', name: 'Otieno Odhiambo', email: 'compliance@example.com' },
  { role: 'finance', name: 'Amina Hassan', email: 'finance@example.com' },
];

const BUSINESS_KYB = {
  type: 'business',
  legal_name: 'Acme Payments Ltd',
  registration_number: 'PVT-2021-5678',
  country: 'KE',
  beneficial_owners: [
    {
      name: 'Juma Tembo',
      date_of_birth: '1975-01-01',
      national_id: { type: 'passport', number: 'AK123456' },
      ownership_bp: 7_000,
    },
  ],
};

describe.each(BACKENDS)('launch gates on %s', (backend) => {
  let sandbox: TestApp;
  let pilot: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    sandbox = await startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true });
    pilot = await startTestApp(backend, 'pilot');
    // The pilot reads the sandbox's database, as MKOBA_SANDBOX_DATABASE_URL links them.
    pilot.deps.launchGateSource = sandbox.db.store;
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await pilot.close();
    await sandbox.close();
  });

  async function gates(org: TestOrganization, t = sandbox, key = org.key) {
    const response = await api(t, 'GET', '/v1/launch-gates', { key });
    expect(response.statusCode, response.body).toBe(200);
    return Object.fromEntries(
      response.data.data.map((g: { product: string; gate: string }) => [`${g.product}/${g.gate}`, g]),
    ) as Record<string, any>;
  }

  async function gateEvents(org: TestOrganization, t = sandbox, key = org.key) {
    const response = await api(t, 'GET', '/v1/events?type=launch_gate.updated&limit=100', { key });
    expect(response.statusCode, response.body).toBe(200);
    return response.data.data as any[];
  }

  function keysCreate(name: string) {
    return runAdminCommand(pilot.deps, { name: 'keys.create', organization: name, operator: 'ops' });
  }

  /** The pilot's MTN MoMo partner, configured with an admin key (which the provider gate does not hold back). */
  async function configureMomoInPilot(name: string) {
    const adminKey = await runAdminCommand(pilot.deps, {
      name: 'keys.create',
      organization: name,
      scopes: ['admin'],
      operator: 'ops',
    });
    if (adminKey.name !== 'keys.create') throw new Error('unexpected result');
    const created = await api(pilot, 'POST', '/v1/rail-partners', {
      key: adminKey.key,
      body: {
        partner: 'mtn_momo',
        settings: { base_url: 'https://proxy.momoapi.mtn.com', target_environment: 'mtnuganda' },
        credentials: {
          api_user: 'pilot-user',
          api_key: 'pilot-key',
          collection_subscription_key: 'pilot-collection',
          disbursement_subscription_key: 'pilot-disbursement',
        },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
  }

  it('lists every gate of the product open, naming what is missing; the organization shows its profile', async () => {
    const org = await newOrganization(sandbox);
    const listed = await api(sandbox, 'GET', '/v1/launch-gates', { key: org.key });
    expect(listed.data).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(listed.data.data.map((g: { gate: string }) => g.gate)).toEqual([...LAUNCH_GATES]);
    const all = await gates(org);
    for (const g of Object.values(all)) {
      expect(g).toMatchObject({
        object: 'launch_gate',
        product: 'mobile_money',
        state: 'open',
        evidence_record: null,
      });
      expect(g.evidence.missing.length).toBeGreaterThan(0);
    }
    expect(all['mobile_money/contacts_named'].evidence.missing).toEqual([
      'technical',
      'compliance',
      'finance',
    ]);
    expect(all['mobile_money/sandbox_scenario_completed'].evidence.missing).toEqual([
      'settled',
      'failed',
      'timed_out',
      'returned',
    ]);
    expect(await gateEvents(org)).toEqual([]);
    const profile = await api(sandbox, 'GET', '/v1/organization', { key: org.key });
    expect(profile.data).toMatchObject({
      object: 'organization',
      id: org.organizationId,
      name: org.name,
      environment: 'sandbox',
      legal_entity: null,
      products: ['mobile_money'],
      contacts: [],
    });
  });

  it('each gate passes by doing the real thing, with its event and evidence; a pilot key follows', async () => {
    const org = await newOrganization(sandbox);

    // No pilot key while the gates are open: the refusal names them.
    const refused = await keysCreate(org.name).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LaunchGatesOpenError);
    expect((refused as LaunchGatesOpenError).openGates).toEqual([
      ...LAUNCH_GATES.map((g) => `mobile_money/${g}`),
      NO_MOBILE_MONEY_PROVIDER,
    ]);
    expect((refused as Error).message).toContain('mobile_money/contacts_named');

    // Contacts: two of three leave it open; the third passes it.
    const two = await api(sandbox, 'PUT', '/v1/organization/contacts', {
      key: org.key,
      body: { contacts: CONTACTS.slice(0, 2) },
    });
    expect(two.statusCode, two.body).toBe(200);
    expect(two.data.contacts[0]).toMatchObject({ role: 'technical', email: 'tech@example.com' });
    expect((await gates(org))['mobile_money/contacts_named']).toMatchObject({
      state: 'open',
      evidence: { missing: ['finance'] },
    });
    const named = await api(sandbox, 'PUT', '/v1/organization/contacts', {
      key: org.key,
      body: { contacts: CONTACTS },
    });
    expect(named.statusCode, named.body).toBe(200);
    const contacts = (await gates(org))['mobile_money/contacts_named'];
    expect(contacts).toMatchObject({
      state: 'passed',
      evidence: {
        contacts: {
          technical: 'tech@example.com',
          compliance: 'compliance@example.com',
          finance: 'finance@example.com',
        },
      },
      evidence_record: expect.stringMatching(/^evd_/),
    });
    expect(contacts.updated_at).toBe(named.data.updated_at);

    // The event, and the evidence record it names in the organization's chain.
    const [event] = await gateEvents(org);
    expect(event).toMatchObject({
      type: 'launch_gate.updated',
      environment: 'sandbox',
      data: {
        product: 'mobile_money',
        gate: 'contacts_named',
        state: 'passed',
        previous_state: 'open',
        evidence_record: contacts.evidence_record,
        updated_at: contacts.updated_at,
      },
    });
    const chain = await api(sandbox, 'GET', '/v1/evidence?kind=launch_gate.update', { key: org.key });
    expect(chain.statusCode, chain.body).toBe(200);
    expect(chain.data.data[0]).toMatchObject({
      id: contacts.evidence_record,
      kind: 'launch_gate.update',
      data: { product: 'mobile_money', gate: 'contacts_named', state: 'passed', previous_state: 'open' },
    });

    // Listing again changes nothing and announces nothing twice.
    await gates(org);
    expect(await gateEvents(org)).toHaveLength(1);

    // Business verified: the legal entity is named, then its KYB is verified.
    const individual = await api(sandbox, 'POST', '/v1/customers', {
      key: org.key,
      body: { type: 'individual', name: 'Not a business' },
    });
    const refusedEntity = await api(sandbox, 'PATCH', '/v1/organization', {
      key: org.key,
      body: { legal_entity: individual.data.id },
    });
    expect(refusedEntity.statusCode).toBe(400);
    expect(refusedEntity.data).toMatchObject({ param: 'legal_entity', errors: [{ code: 'not_business' }] });
    const business = await api(sandbox, 'POST', '/v1/customers', {
      key: org.key,
      body: { type: 'business', name: 'Acme Payments Ltd' },
    });
    const entity = await api(sandbox, 'PATCH', '/v1/organization', {
      key: org.key,
      body: { legal_entity: business.data.id },
    });
    expect(entity.statusCode, entity.body).toBe(200);
    expect(entity.data.legal_entity).toBe(business.data.id);
    expect((await gates(org))['mobile_money/business_verified']).toMatchObject({
      state: 'open',
      evidence: { legal_entity: business.data.id, missing: ['kyb_verified'] },
    });
    const verification = await api(sandbox, 'POST', `/v1/customers/${business.data.id}/verifications`, {
      key: org.key,
      body: BUSINESS_KYB,
    });
    expect(verification.statusCode, verification.body).toBe(201);
    expect(verification.data.status).toBe('verified');
    expect((await gates(org))['mobile_money/business_verified']).toMatchObject({
      state: 'passed',
      evidence: {
        legal_entity: business.data.id,
        verification: verification.data.id,
        decided_by: 'sandbox_provider',
      },
      updated_at: verification.data.decided_at,
    });

    // Policies: the version every organization starts with does not count; one the organization writes does.
    const policy = await api(sandbox, 'PUT', '/v1/policies', {
      key: org.key,
      body: {
        rules: [{ id: 'no_cards', applies_to: 'transfer', match: { rails: ['card'] }, action: 'deny' }],
      },
    });
    expect(policy.statusCode, policy.body).toBe(200);
    expect((await gates(org))['mobile_money/policies_configured']).toMatchObject({
      state: 'passed',
      evidence: { policy_version: policy.data.version, rules: 1 },
    });

    // Webhook endpoint: an endpoint that fails the test event leaves it open; one that acknowledges it passes it.
    const subscription = await api(sandbox, 'POST', '/v1/webhook-subscriptions', {
      key: org.key,
      body: { url: receiver.url, events: ['*'] },
    });
    expect(subscription.statusCode, subscription.body).toBe(201);
    const dispatch = () =>
      dispatchWebhooksOnce(sandbox.deps, {
        settings: { ...defaultWebhookSettings('sandbox'), retryScheduleSeconds: [0] },
        sender: httpWebhookSender({ timeoutMs: 5_000, blockReservedAddresses: false }),
      });
    receiver.respond = () => ({ status: 500 });
    const test = await api(sandbox, 'POST', '/v1/sandbox/events', {
      key: org.key,
      body: { type: 'transfer.settled' },
    });
    expect(test.statusCode, test.body).toBe(201);
    while ((await dispatch()) > 0);
    expect((await gates(org))['mobile_money/webhook_endpoint_verified'].state).toBe('open');
    receiver.respond = () => ({ status: 200 });
    await api(sandbox, 'POST', `/v1/events/${test.data.id}/redeliver`, { key: org.key });
    while ((await dispatch()) > 0);
    const signed = receiver.received.find(
      (r) => r.body.includes(test.data.id) && r.headers['service-signature'],
    );
    expect(signed?.headers['service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect((await gates(org))['mobile_money/webhook_endpoint_verified']).toMatchObject({
      state: 'passed',
      evidence: {
        subscription: subscription.data.id,
        event: test.data.id,
        event_type: 'transfer.settled',
        status_code: 200,
      },
    });

    // The scenario: the sandbox rails' magic numbers settle, fail and time out; a settled payout is returned.
    const wallet = await fundedWallet(sandbox, '1000.00', 'KES', org.key);
    const pay = (phone: string) => mobilePayout(sandbox, wallet, phone, org.key);
    const settles = await pay('+254700000000');
    const fails = await pay('+254700000001');
    const timesOut = await pay('+254700000003');
    await drainRails(sandbox);
    const partial = (await gates(org))['mobile_money/sandbox_scenario_completed'];
    expect(partial).toMatchObject({
      state: 'open',
      evidence: {
        settled: { transfer: settles },
        failed: { transfer: fails },
        timed_out: { transfer: timesOut },
        missing: ['returned'],
      },
    });
    // The time-out, once seen, is kept even after the transfer is settled.
    const settledLate = await api(sandbox, 'POST', `/v1/sandbox/transfers/${timesOut}/settle`, {
      key: org.key,
    });
    expect(settledLate.statusCode, settledLate.body).toBe(200);
    const returned = await api(sandbox, 'POST', `/v1/sandbox/transfers/${settles}/return`, { key: org.key });
    expect(returned.statusCode, returned.body).toBe(200);
    expect((await gates(org))['mobile_money/sandbox_scenario_completed']).toMatchObject({
      state: 'passed',
      evidence: { timed_out: { transfer: timesOut }, returned: { transfer: settles } },
      updated_at: returned.data.returned_at,
    });

    // Pilot still refuses, naming only the gate left.
    const stillOpen = await keysCreate(org.name).catch((e: unknown) => e);
    expect((stillOpen as LaunchGatesOpenError).openGates).toEqual([
      'mobile_money/reconciliation_run',
      NO_MOBILE_MONEY_PROVIDER,
    ]);

    // Reconciliation: the rail's statement imported once.
    const statement = await api(sandbox, 'POST', '/v1/sandbox/statements', {
      key: org.key,
      body: { rail: 'mobile_money', from: today(), to: today() },
    });
    expect(statement.statusCode, statement.body).toBe(200);
    const imported = await api(sandbox, 'POST', '/v1/reconciliation/statements', {
      key: org.key,
      body: { rail: 'mobile_money', from: today(), to: today(), lines: statement.data.lines },
    });
    expect(imported.statusCode, imported.body).toBe(201);
    const all = await gates(org);
    expect(all['mobile_money/reconciliation_run']).toMatchObject({
      state: 'passed',
      evidence: { statement: imported.data.id, rail: 'mobile_money' },
    });
    expect(Object.values(all).every((g) => g.state === 'passed')).toBe(true);
    expect((await gateEvents(org)).map((e) => e.data.gate).sort()).toEqual([...LAUNCH_GATES].sort());

    // Still no key that moves money while no partner carries the product's rail in the pilot.
    const noPartner = await keysCreate(org.name).catch((e: unknown) => e);
    expect((noPartner as LaunchGatesOpenError).openGates).toEqual([NO_MOBILE_MONEY_PROVIDER]);
    await configureMomoInPilot(org.name);

    // The pilot issues the key now, and shows the sandbox's record of each gate.
    const issued = await keysCreate(org.name);
    expect(issued.name === 'keys.create' && issued.key).toMatch(/^sk_pilot_/);
    const pilotKey = issued.name === 'keys.create' ? issued.key : '';
    const seen = await gates(org, pilot, pilotKey);
    expect(seen['mobile_money/reconciliation_run']).toEqual(all['mobile_money/reconciliation_run']);
    expect(Object.values(seen).every((g) => g.state === 'passed' && g.override === null)).toBe(true);
    expect((await api(pilot, 'GET', '/v1/organization', { key: pilotKey })).data).toMatchObject({
      name: org.name,
      environment: 'pilot',
    });
    await expectLedgerHealthy(sandbox);
  });

  it('a product the organization adds has its own scenario and reconciliation gates', async () => {
    const org = await newOrganization(sandbox);
    const patched = await api(sandbox, 'PATCH', '/v1/organization', {
      key: org.key,
      body: { products: ['mobile_money', 'digital_banking'] },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const wallet = await fundedWallet(sandbox, '1000.00', 'KES', org.key);
    const created = await api(sandbox, 'POST', '/v1/transfers', {
      key: org.key,
      body: {
        source: wallet,
        destination: {
          type: 'bank_account',
          bank_code: '01',
          account_number: '0000000001',
          account_name: 'Acme',
        },
        amount: '150.00',
        currency: 'KES',
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    await drainRails(sandbox);
    const all = await gates(org);
    expect(Object.keys(all)).toHaveLength(2 * LAUNCH_GATES.length);
    expect(all['digital_banking/sandbox_scenario_completed'].evidence).toMatchObject({
      rails: ['bank', 'card'],
      failed: { transfer: created.data.id },
    });
    expect(all['mobile_money/sandbox_scenario_completed'].evidence.failed).toBeUndefined();
    const banking = await api(sandbox, 'GET', '/v1/launch-gates?product=digital_banking', { key: org.key });
    expect(banking.data.data.every((g: { product: string }) => g.product === 'digital_banking')).toBe(true);
  });

  it('the sandbox evaluates organizations nobody lists, and announces a change once however many evaluate', async () => {
    const org = await newOrganization(sandbox);
    await api(sandbox, 'PUT', '/v1/organization/contacts', { key: org.key, body: { contacts: CONTACTS } });
    const walk = launchGateWalker(sandbox.deps);
    const other = launchGateWalker(sandbox.deps);
    for (;;) {
      const [a] = await Promise.all([walk(), other()]);
      if (a < 50) break;
    }
    const events = await gateEvents(org);
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ gate: 'contacts_named', state: 'passed' });
  });

  it('an operator overrides open gates in the pilot with a reason, recorded as evidence; then the key is issued', async () => {
    const org = await newOrganization(sandbox);
    await api(sandbox, 'PUT', '/v1/organization/contacts', { key: org.key, body: { contacts: CONTACTS } });
    await gates(org);
    const sandboxOverride = await runAdminCommand(sandbox.deps, {
      name: 'launch-gates.override',
      organization: org.name,
      reason: 'not here',
    }).catch((e: unknown) => e);
    expect((sandboxOverride as { code?: string }).code).toBe('validation_error');

    const partial = await runAdminCommand(pilot.deps, {
      name: 'launch-gates.override',
      organization: org.name,
      reason: 'KYB reviewed on paper by the operator',
      gates: ['business_verified'],
    });
    expect(partial.name === 'launch-gates.override' && partial.overridden.map((g) => g.gate)).toEqual([
      'business_verified',
    ]);
    const left = (await keysCreate(org.name).catch((e: unknown) => e)) as LaunchGatesOpenError;
    expect(left.openGates).toEqual([
      'mobile_money/policies_configured',
      'mobile_money/webhook_endpoint_verified',
      'mobile_money/sandbox_scenario_completed',
      'mobile_money/reconciliation_run',
      NO_MOBILE_MONEY_PROVIDER,
    ]);
    const rest = await runAdminCommand(pilot.deps, {
      name: 'launch-gates.override',
      organization: org.name,
      reason: 'pilot with a partner who rehearsed on their own sandbox',
    });
    if (rest.name !== 'launch-gates.override') throw new Error('unexpected result');
    expect(rest.overridden).toHaveLength(4);
    await configureMomoInPilot(org.name);
    const evidenceRecord = rest.overridden[0]?.evidenceRecord;
    expect(
      rest.overridden.every((g) => g.evidenceRecord === evidenceRecord && g.state === 'overridden'),
    ).toBe(true);

    const issued = await keysCreate(org.name);
    if (issued.name !== 'keys.create') throw new Error('unexpected result');
    expect(issued.key).toMatch(/^sk_pilot_/);
    expect(issued.organizationId).toBe(rest.organizationId);
    const admin = await runAdminCommand(pilot.deps, {
      name: 'keys.create',
      organization: org.name,
      scopes: ['compliance'],
      operator: 'ops',
    });
    const complianceKey = admin.name === 'keys.create' ? admin.key : '';

    // In the pilot: contacts passed in the sandbox; the rest overridden here, each naming its record.
    const seen = await gates(org, pilot, issued.key);
    expect(seen['mobile_money/contacts_named']).toMatchObject({ state: 'passed', override: null });
    expect(seen['mobile_money/business_verified']).toMatchObject({
      state: 'overridden',
      override: { reason: 'KYB reviewed on paper by the operator' },
      evidence: { missing: ['legal_entity'] },
    });
    expect(seen['mobile_money/reconciliation_run']).toMatchObject({
      state: 'overridden',
      evidence_record: evidenceRecord,
      override: {
        reason: 'pilot with a partner who rehearsed on their own sandbox',
        evidence_record: evidenceRecord,
      },
    });
    const chain = await api(pilot, 'GET', '/v1/evidence?kind=launch_gate.override', { key: complianceKey });
    expect(chain.statusCode, chain.body).toBe(200);
    expect(chain.data.data.map((r: { id: string }) => r.id)).toContain(evidenceRecord);
    const record = chain.data.data.find((r: { id: string }) => r.id === evidenceRecord);
    expect(record.data).toMatchObject({
      decided_by: 'operator',
      environment: 'pilot',
      reason: 'pilot with a partner who rehearsed on their own sandbox',
    });
    expect(record.data.gates.map((g: { gate: string }) => g.gate)).toEqual([
      'policies_configured',
      'webhook_endpoint_verified',
      'sandbox_scenario_completed',
      'reconciliation_run',
    ]);
    const events = await gateEvents(org, pilot, issued.key);
    expect(events).toHaveLength(5);
    expect(events.every((e) => e.environment === 'pilot' && e.data.state === 'overridden')).toBe(true);

    // Overriding again changes nothing.
    const again = await runAdminCommand(pilot.deps, {
      name: 'launch-gates.override',
      organization: org.name,
      reason: 'again',
    });
    expect(again.name === 'launch-gates.override' && again.overridden).toEqual([]);
  });

  it("an organization whose policy governs overrides gets the operator's override only once a member approves it", async () => {
    const org = await newOrganization(sandbox);
    await api(sandbox, 'PUT', '/v1/organization/contacts', { key: org.key, body: { contacts: CONTACTS } });
    await gates(org);
    const pilotKey = (
      await issueApiKey(pilot.deps, {
        organizationName: org.name,
        scopes: ['read', 'write', 'compliance', 'admin'],
      })
    ).key;
    const admin = async (email: string) => {
      await runAdminCommand(pilot.deps, {
        name: 'members.add',
        organization: org.name,
        email,
        roles: ['admin'],
      });
      return (await issueApiKey(pilot.deps, { organizationName: org.name, memberEmail: email })).key;
    };
    const alice = await admin('alice@example.com');
    const bob = await admin('bob@example.com');
    // The pilot's default rule governs the policy itself: adding the override rule waits for Bob.
    const current = (await api(pilot, 'GET', '/v1/policies', { key: pilotKey })).data;
    const rule = {
      id: 'overrides-need-an-admin',
      applies_to: 'change',
      match: { kinds: ['launch_gate_override'] },
      action: 'require_approval',
      approval: { quorum: 1, roles: ['admin'] },
    };
    const proposed = await api(pilot, 'PUT', '/v1/policies', {
      key: alice,
      body: { rules: [...current.rules, rule] },
    });
    expect(proposed.statusCode, proposed.body).toBe(202);
    const policyVote = await api(pilot, 'POST', `/v1/approvals/${proposed.data.approval}/approve`, {
      key: bob,
      body: {},
    });
    expect(policyVote.statusCode, policyVote.body).toBe(200);

    const override = await runAdminCommand(pilot.deps, {
      name: 'launch-gates.override',
      organization: org.name,
      reason: 'pilot with a partner who rehearsed on their own sandbox',
    });
    if (override.name !== 'launch-gates.override') throw new Error('unexpected result');
    expect(override.overridden).toEqual([]);
    expect(override.pending?.change).toMatch(/^chg_/);
    expect(Object.values(await gates(org, pilot, pilotKey)).some((g) => g.state === 'open')).toBe(true);
    const vote = await api(pilot, 'POST', `/v1/approvals/${override.pending?.approval}/approve`, {
      key: alice,
      body: {},
    });
    expect(vote.statusCode, vote.body).toBe(200);
    const change = await api(pilot, 'GET', `/v1/changes/${override.pending?.change}`, { key: pilotKey });
    expect(change.data).toMatchObject({
      kind: 'launch_gate_override',
      status: 'applied',
      proposed_by: 'system',
    });
    expect(Object.values(await gates(org, pilot, pilotKey)).every((g) => g.state !== 'open')).toBe(true);
  });

  it('a pilot not linked to its sandbox shows every gate open and issues no key', async () => {
    pilot.deps.launchGateSource = undefined;
    try {
      const refused = (await keysCreate('Unlinked Ltd').catch((e: unknown) => e)) as LaunchGatesOpenError;
      expect(refused).toBeInstanceOf(LaunchGatesOpenError);
      expect(refused.openGates).toEqual([
        ...LAUNCH_GATES.map((g) => `mobile_money/${g}`),
        NO_MOBILE_MONEY_PROVIDER,
      ]);
      const listed = await runAdminCommand(pilot.deps, {
        name: 'launch-gates.list',
        organization: 'Unlinked Ltd',
      });
      expect(listed.name === 'launch-gates.list' && listed.gates[0]?.evidence).toEqual({
        missing: ['sandbox_not_linked'],
      });
      // Nothing was written by the refusal: no organization appeared.
      const keys = await runAdminCommand(pilot.deps, { name: 'keys.list', organization: 'Unlinked Ltd' });
      expect(keys.name === 'keys.list' && keys.keys).toEqual([]);
    } finally {
      pilot.deps.launchGateSource = sandbox.db.store;
    }
    // An organization the sandbox does not know is open on every gate, naming why.
    const unknown = (await keysCreate('Never In The Sandbox').catch(
      (e: unknown) => e,
    )) as LaunchGatesOpenError;
    expect(unknown.openGates).toHaveLength(LAUNCH_GATES.length + 1);
    const listed = await runAdminCommand(pilot.deps, {
      name: 'launch-gates.list',
      organization: 'Never In The Sandbox',
    });
    expect(listed.name === 'launch-gates.list' && listed.gates[0]?.evidence).toEqual({
      missing: ['no_sandbox_organization'],
    });
  });

  it('contacts and products are checked field by field; reading needs no admin scope, changing does', async () => {
    const org = await newOrganization(sandbox);
    const put = (body: unknown, key = org.key) =>
      api(sandbox, 'PUT', '/v1/organization/contacts', { key, body });
    const twice = await put({ contacts: [CONTACTS[0], CONTACTS[0]] });
    expect(twice.statusCode).toBe(400);
    expect(twice.data.param).toBe('contacts[1].role');
    const badEmail = await put({ contacts: [{ ...CONTACTS[0], email: 'not-an-email' }] });
    expect(badEmail.statusCode).toBe(400);
    expect(badEmail.data.param).toBe('contacts[0].email');
    const badRole = await put({ contacts: [{ ...CONTACTS[0], role: 'ceo' }] });
    expect(badRole.statusCode).toBe(400);
    const products = await api(sandbox, 'PATCH', '/v1/organization', {
      key: org.key,
      body: { products: ['lending'] },
    });
    expect(products.statusCode).toBe(400);
    const integrator = await org.member(['initiator']);
    expect((await put({ contacts: CONTACTS }, integrator.key)).statusCode).toBe(403);
    expect((await api(sandbox, 'GET', '/v1/organization', { key: integrator.key })).statusCode).toBe(200);
    expect((await api(sandbox, 'GET', '/v1/launch-gates', { key: integrator.key })).statusCode).toBe(200);
    const replay = await api(sandbox, 'PUT', '/v1/organization/contacts', {
      key: org.key,
      body: { contacts: CONTACTS },
      headers: { 'Idempotency-Key': 'contacts-1' },
    });
    const again = await api(sandbox, 'PUT', '/v1/organization/contacts', {
      key: org.key,
      body: { contacts: CONTACTS },
      headers: { 'Idempotency-Key': 'contacts-1' },
    });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(replay.body);
  });
});
