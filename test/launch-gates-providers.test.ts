/**
 * The rail-provider gate through the operator's `keys create`: in a pilot linked to its sandbox, with the
 * sandbox's gates overridden, a key that may move money waits until every launched product's rails have an
 * active partner configured in the pilot (mobile money: M-Pesa or MoMo; digital banking: Flutterwave on
 * the bank rail; stablecoins: Fireblocks), naming what is missing; a disabled partner does not count; a key
 * without `write` passes it, so the organization can configure its partners; card payouts are said to be
 * sandbox-only. An organization that named the mobile-money markets it pays in (`mpesa:KE`, `mtn:UG`) waits
 * until an active partner carries each, and the refusal names those uncovered.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import { LaunchGatesOpenError } from '../src/modules/launchGates/useCases.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { newOrganization } from './support/organizations.ts';

const PEM = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});

const PARTNER_BODIES = {
  mpesa_daraja: {
    partner: 'mpesa_daraja',
    settings: { base_url: 'https://api.safaricom.co.ke', short_code: '600996', initiator_name: 'mkoba-api' },
    credentials: { consumer_key: 'k', consumer_secret: 's', security_credential: 'c', passkey: 'p' },
  },
  mtn_momo: {
    partner: 'mtn_momo',
    settings: { base_url: 'https://proxy.momoapi.mtn.com', target_environment: 'mtnuganda' },
    credentials: {
      api_user: 'u',
      api_key: 'k',
      collection_subscription_key: 'c',
      disbursement_subscription_key: 'd',
    },
  },
  flutterwave: {
    partner: 'flutterwave',
    settings: { base_url: 'https://api.flutterwave.com' },
    credentials: { secret_key: 'FLWSECK-x', secret_hash: 'hash' },
  },
  fireblocks: {
    partner: 'fireblocks',
    settings: {
      base_url: 'https://api.fireblocks.io',
      source_vault_account_id: '0',
      webhook_public_key: PEM.publicKey,
    },
    credentials: { api_key: 'fb-key', private_key: PEM.privateKey },
  },
};

describe.each(BACKENDS)('the rail-provider launch gate on %s', (backend) => {
  let sandbox: TestApp;
  let pilot: TestApp;

  beforeAll(async () => {
    sandbox = await startTestApp(backend, 'sandbox');
    pilot = await startTestApp(backend, 'pilot');
    pilot.deps.launchGateSource = sandbox.db.store;
  });
  afterAll(async () => {
    await pilot.close();
    await sandbox.close();
  });

  const keysCreate = (organization: string, scopes?: ('read' | 'write' | 'admin')[]) =>
    runAdminCommand(pilot.deps, { name: 'keys.create', organization, operator: 'ops', scopes });

  async function refusal(organization: string): Promise<LaunchGatesOpenError> {
    const refused = await keysCreate(organization).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LaunchGatesOpenError);
    return refused as LaunchGatesOpenError;
  }

  it('refuses a key that moves money until each product has an active partner, naming what is missing', async () => {
    const org = await newOrganization(sandbox);
    const patched = await api(sandbox, 'PATCH', '/v1/organization', {
      key: org.key,
      body: { products: ['mobile_money', 'digital_banking', 'stablecoins'] },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    await api(sandbox, 'GET', '/v1/launch-gates', { key: org.key });
    const overridden = await runAdminCommand(pilot.deps, {
      name: 'launch-gates.override',
      organization: org.name,
      reason: 'rehearsed on the partner sandboxes',
    });
    expect(overridden.name === 'launch-gates.override' && overridden.overridden).toHaveLength(18);

    const first = await refusal(org.name);
    expect(first.openGates).toEqual([
      'mobile_money/rail_providers_configured (missing: mobile_money (mpesa_daraja or mtn_momo))',
      'digital_banking/rail_providers_configured (missing: bank (flutterwave))',
      'stablecoins/rail_providers_configured (missing: digital_asset (fireblocks))',
    ]);
    expect(first.notes).toEqual(['digital_banking: card payouts are sandbox-only']);
    expect(first.message).toContain('card payouts are sandbox-only');
    expect(first.message).toContain('--scopes admin');
    // `mkoba launch-gates list` shows them after the recorded gates, decided now.
    const listed = await runAdminCommand(pilot.deps, { name: 'launch-gates.list', organization: org.name });
    if (listed.name !== 'launch-gates.list') throw new Error('unexpected result');
    expect(listed.gates.filter((g) => g.gate === 'rail_providers_configured')).toMatchObject([
      { product: 'mobile_money', state: 'open', evidence: { configured: [] }, evidenceRecord: null },
      {
        product: 'digital_banking',
        state: 'open',
        evidence: { missing: ['bank (flutterwave)'], sandbox_only: ['card'] },
      },
      { product: 'stablecoins', state: 'open', evidence: { missing: ['digital_asset (fireblocks)'] } },
    ]);
    expect(listed.gates.slice(-3).map((g) => g.gate)).toEqual(Array(3).fill('rail_providers_configured'));

    // An admin key moves no money: the organization gets it, and configures its partners with it.
    const admin = await keysCreate(org.name, ['admin']);
    if (admin.name !== 'keys.create') throw new Error('unexpected result');
    const configure = async (body: object) => {
      const created = await api(pilot, 'POST', '/v1/rail-partners', { key: admin.key, body });
      expect(created.statusCode, created.body).toBe(201);
      return created.data.id as string;
    };
    await configure(PARTNER_BODIES.mtn_momo);
    const flutterwave = await configure(PARTNER_BODIES.flutterwave);
    expect((await refusal(org.name)).openGates).toEqual([
      'stablecoins/rail_providers_configured (missing: digital_asset (fireblocks))',
    ]);
    await configure(PARTNER_BODIES.fireblocks);

    // A disabled partner carries nothing: the product's gate opens again.
    const disabled = await api(pilot, 'PATCH', `/v1/rail-partners/${flutterwave}`, {
      key: admin.key,
      body: { status: 'disabled' },
    });
    expect(disabled.statusCode, disabled.body).toBe(200);
    expect((await refusal(org.name)).openGates).toEqual([
      'digital_banking/rail_providers_configured (missing: bank (flutterwave))',
    ]);
    await api(pilot, 'PATCH', `/v1/rail-partners/${flutterwave}`, {
      key: admin.key,
      body: { status: 'active' },
    });
    const issued = await keysCreate(org.name);
    expect(issued.name === 'keys.create' && issued.key).toMatch(/^sk_pilot_/);
    const passed = await runAdminCommand(pilot.deps, { name: 'launch-gates.list', organization: org.name });
    if (passed.name !== 'launch-gates.list') throw new Error('unexpected result');
    expect(
      passed.gates.filter((g) => g.gate === 'rail_providers_configured').map((g) => [g.state, g.evidence]),
    ).toEqual([
      ['passed', { configured: ['mtn_momo:mobile_money:mtn'] }],
      ['passed', { configured: ['flutterwave:bank'], sandbox_only: ['card'] }],
      ['passed', { configured: ['fireblocks:digital_asset'] }],
    ]);
  });

  it('holds the mobile-money markets the organization named against what its partners carry', async () => {
    const org = await newOrganization(sandbox);
    const named = await api(sandbox, 'PATCH', '/v1/organization', {
      key: org.key,
      body: { mobile_networks: ['mpesa:KE', 'mtn:UG'] },
    });
    expect(named.statusCode, named.body).toBe(200);
    expect(named.data).toMatchObject({ products: ['mobile_money'], mobile_networks: ['mpesa:KE', 'mtn:UG'] });
    await api(sandbox, 'GET', '/v1/launch-gates', { key: org.key });
    await runAdminCommand(pilot.deps, {
      name: 'launch-gates.override',
      organization: org.name,
      reason: 'rehearsed on the partner sandboxes',
    });
    expect((await refusal(org.name)).openGates).toEqual([
      'mobile_money/rail_providers_configured (missing: mobile_money mpesa:KE (mpesa_daraja or flutterwave), mobile_money mtn:UG (mtn_momo or flutterwave))',
    ]);
    const admin = await keysCreate(org.name, ['admin']);
    if (admin.name !== 'keys.create') throw new Error('unexpected result');
    const daraja = await api(pilot, 'POST', '/v1/rail-partners', {
      key: admin.key,
      body: PARTNER_BODIES.mpesa_daraja,
    });
    expect(daraja.statusCode, daraja.body).toBe(201);
    // Kenya is carried, Uganda is not: one partner on the rail is no longer enough.
    const refused = await refusal(org.name);
    expect(refused.openGates).toEqual([
      'mobile_money/rail_providers_configured (missing: mobile_money mtn:UG (mtn_momo or flutterwave))',
    ]);
    const listed = await runAdminCommand(pilot.deps, { name: 'launch-gates.list', organization: org.name });
    if (listed.name !== 'launch-gates.list') throw new Error('unexpected result');
    expect(listed.gates.find((g) => g.gate === 'rail_providers_configured')).toMatchObject({
      state: 'open',
      evidence: { configured: ['mpesa_daraja:mobile_money:mpesa'], uncovered_networks: ['mtn:UG'] },
    });
    const momo = await api(pilot, 'POST', '/v1/rail-partners', {
      key: admin.key,
      body: PARTNER_BODIES.mtn_momo,
    });
    expect(momo.statusCode, momo.body).toBe(201);
    const issued = await keysCreate(org.name);
    expect(issued.name === 'keys.create' && issued.key).toMatch(/^sk_pilot_/);

    // MoMo configured for Uganda (`mtnuganda`) does not carry Ghana: MTN contracts each market apart.
    const ghana = await api(pilot, 'PATCH', '/v1/organization', {
      key: admin.key,
      body: { mobile_networks: ['mpesa:KE', 'mtn:GH'] },
    });
    expect(ghana.statusCode, ghana.body).toBe(200);
    expect((await refusal(org.name)).openGates).toEqual([
      'mobile_money/rail_providers_configured (missing: mobile_money mtn:GH (mtn_momo or flutterwave))',
    ]);
    // Flutterwave's mobile-money transfers carry MTN Ghana where no MoMo configuration does.
    const flutterwave = await api(pilot, 'POST', '/v1/rail-partners', {
      key: admin.key,
      body: PARTNER_BODIES.flutterwave,
    });
    expect(flutterwave.statusCode, flutterwave.body).toBe(201);
    const covered = await keysCreate(org.name);
    expect(covered.name === 'keys.create' && covered.key).toMatch(/^sk_pilot_/);
    // A market no partner kind carries yet is named as such; the pilot's own profile counts first.
    const airtel = await api(pilot, 'PATCH', '/v1/organization', {
      key: admin.key,
      body: { mobile_networks: ['mpesa:KE', 'airtel:KE'] },
    });
    expect(airtel.statusCode, airtel.body).toBe(200);
    expect((await refusal(org.name)).openGates).toEqual([
      'mobile_money/rail_providers_configured (missing: mobile_money airtel:KE (no partner carries it yet))',
    ]);
  });

  it('refuses a market that is not one, or one named twice, naming it', async () => {
    const org = await newOrganization(sandbox);
    const patch = (mobile_networks: unknown) =>
      api(sandbox, 'PATCH', '/v1/organization', { key: org.key, body: { mobile_networks } });
    const unknown = await patch(['mpesa:KE', 'mpesa:UG']);
    expect(unknown.statusCode, unknown.body).toBe(400);
    expect(unknown.data).toMatchObject({ code: 'validation_error' });
    expect(unknown.body).toContain('mobile_networks');
    const twice = await patch(['mtn:UG', 'mtn:UG']);
    expect(twice.statusCode, twice.body).toBe(400);
    expect(twice.data).toMatchObject({ code: 'validation_error', param: 'mobile_networks[1]' });
    const cleared = await patch(null);
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(cleared.data.mobile_networks).toBeNull();
  });

  it('read-only and compliance keys pass it; an organization new to the pilot has no partner', async () => {
    const org = await newOrganization(sandbox);
    await api(sandbox, 'GET', '/v1/launch-gates', { key: org.key });
    await runAdminCommand(pilot.deps, {
      name: 'launch-gates.override',
      organization: org.name,
      reason: 'rehearsed elsewhere',
    });
    expect((await refusal(org.name)).openGates).toEqual([
      'mobile_money/rail_providers_configured (missing: mobile_money (mpesa_daraja or mtn_momo))',
    ]);
    const read = await keysCreate(org.name, ['read']);
    expect(read.name === 'keys.create' && read.key).toMatch(/^sk_pilot_/);
    expect((await refusal(org.name)).notes).toEqual([]);
  });
});
