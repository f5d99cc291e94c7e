/**
 * `mkoba subscriptions promote`: a production deployment linked to the sandbox copies an organization's
 * reviewed sandbox webhook subscriptions (new ids, new secrets shown once), skipping what production's URL
 * rules refuse and what it has already, with one evidence record naming the operator; GET /v1/organization
 * says whether the organization manages its own subscriptions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminResult, runAdminCommand } from '../src/app/admin.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { liveSecrets, openStoredSecret } from '../src/modules/webhooks/repository/secrets.ts';
import { api, BACKENDS, type TestApp } from './support/harness.ts';
import { newOrganization } from './support/organizations.ts';
import {
  type LinkedDeployments,
  promoteSubscriptions,
  promotionOf,
  startLinkedDeployments,
} from './support/promotion.ts';

/** A public address written as an IP literal: accepted by production's rules without a DNS look-up. */
const PUBLIC_URL = 'https://93.184.215.14/mkoba/webhooks';
const PUBLIC_URL_2 = 'https://93.184.215.14/mkoba/ledger';
const LOCAL_URL = 'http://127.0.0.1:9/webhooks';

describe.each(BACKENDS)('subscription promotion on %s', (backend) => {
  let linked: LinkedDeployments;
  let sandbox: TestApp;
  let production: TestApp;

  beforeAll(async () => {
    linked = await startLinkedDeployments(backend);
    ({ sandbox, production } = linked);
  });
  afterAll(() => linked.close());

  async function subscribe(key: string, body: Record<string, unknown>) {
    const created = await api(sandbox, 'POST', '/v1/webhook-subscriptions', { key, body });
    expect(created.statusCode, created.body).toBe(201);
    return created.data as { id: string };
  }

  /** An organization in both deployments: its sandbox key, and its production admin key. */
  async function organizationInBoth() {
    const org = await newOrganization(sandbox);
    const live = await issueApiKey(production.deps, {
      organizationName: org.name,
      scopes: ['read', 'write', 'compliance', 'admin'],
    });
    return { org, liveKey: live.key, liveOrganizationId: live.record.organizationId };
  }

  const promote = (organization: string, subscriptions?: string[], t = production) =>
    promoteSubscriptions(t, organization, subscriptions);
  const promoted = promotionOf;

  it('the organization shows whether it manages its own subscriptions: on in the sandbox, off in production', async () => {
    const { org, liveKey } = await organizationInBoth();
    const inSandbox = await api(sandbox, 'GET', '/v1/organization', { key: org.key });
    expect(inSandbox.data.webhook_subscriptions_enabled).toBe(true);
    const inProduction = await api(production, 'GET', '/v1/organization', { key: liveKey });
    expect(inProduction.data.webhook_subscriptions_enabled).toBe(false);
    const refused = await api(production, 'POST', '/v1/webhook-subscriptions', {
      key: liveKey,
      body: { url: PUBLIC_URL, events: ['*'] },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.data.code).toBe('subscriptions_not_enabled');
    const liveOrganizationId = inProduction.data.id;
    await runAdminCommand(production.deps, {
      name: 'orgs.set-webhooks',
      organizationId: liveOrganizationId,
      enabled: true,
    });
    expect(
      (await api(production, 'GET', '/v1/organization', { key: liveKey })).data.webhook_subscriptions_enabled,
    ).toBe(true);
  });

  it('copies the enabled sandbox subscriptions production accepts, each with a new secret, once; recorded as evidence', async () => {
    const { org, liveKey, liveOrganizationId } = await organizationInBoth();
    const payouts = await subscribe(org.key, {
      url: PUBLIC_URL,
      events: ['transfer.settled', 'transfer.failed'],
      description: 'Payout outcomes',
      payload_format: 'camel_case',
    });
    const ledger = await subscribe(org.key, { url: PUBLIC_URL_2, events: ['*'] });
    const local = await subscribe(org.key, { url: LOCAL_URL, events: ['*'] });
    const disabled = await subscribe(org.key, { url: 'https://93.184.215.14/old', events: ['*'] });
    const off = await api(sandbox, 'PATCH', `/v1/webhook-subscriptions/${disabled.id}`, {
      key: org.key,
      body: { status: 'disabled' },
    });
    expect(off.statusCode, off.body).toBe(200);

    const result = promoted(await promote(org.name));
    expect(result.organizationId).toBe(liveOrganizationId);
    expect(result.promoted.map((p) => [p.sandboxSubscription, p.url])).toEqual([
      [payouts.id, PUBLIC_URL],
      [ledger.id, PUBLIC_URL_2],
    ]);
    expect(result.skipped).toEqual([
      { sandboxSubscription: local.id, url: LOCAL_URL, reason: expect.stringContaining('url') },
    ]);

    // Production now has them, as the organization chose them in the sandbox, under new ids.
    const listed = await api(production, 'GET', '/v1/webhook-subscriptions', { key: liveKey });
    expect(listed.statusCode, listed.body).toBe(200);
    const byUrl = Object.fromEntries(listed.data.data.map((s: { url: string }) => [s.url, s]));
    expect(byUrl[PUBLIC_URL]).toMatchObject({
      id: result.promoted[0]?.subscription,
      events: ['transfer.settled', 'transfer.failed'],
      description: 'Payout outcomes',
      payload_format: 'camel_case',
      status: 'enabled',
    });
    expect(byUrl[PUBLIC_URL_2]).toMatchObject({ events: ['*'], status: 'enabled' });
    expect(listed.data.data).toHaveLength(2);
    // Each secret shown is the one production signs with, and not the sandbox's.
    for (const p of result.promoted) {
      expect(p.subscription).not.toBe(p.sandboxSubscription);
      const [stored] = await liveSecrets(production.db.store, p.subscription, new Date());
      expect(stored && openStoredSecret(production.deps.keyring, stored)).toBe(p.secret);
      const [sandboxSecret] = await liveSecrets(sandbox.db.store, p.sandboxSubscription, new Date());
      expect(sandboxSecret && openStoredSecret(sandbox.deps.keyring, sandboxSecret)).not.toBe(p.secret);
    }

    const evidence = await api(production, 'GET', '/v1/evidence?kind=webhook_subscription.promote', {
      key: liveKey,
    });
    expect(evidence.statusCode, evidence.body).toBe(200);
    expect(evidence.data.data).toHaveLength(1);
    expect(evidence.data.data[0]).toMatchObject({
      id: result.evidenceRecord,
      actor: 'system',
      data: {
        decided_by: 'operator',
        operator: 'ops-amina',
        environment: 'production',
        promoted: result.promoted.map((p) => ({
          sandbox_subscription: p.sandboxSubscription,
          subscription: p.subscription,
          url: p.url,
          events: p.events,
        })),
        skipped: [{ sandbox_subscription: local.id, reason: expect.any(String) }],
      },
    });
    expect(JSON.stringify(evidence.data)).not.toContain(result.promoted[0]?.secret);

    // Run again: nothing is copied twice, nothing more recorded.
    const again = promoted(await promote(org.name));
    expect(again.promoted).toEqual([]);
    expect(again.skipped.map((s) => s.reason)).toContain('a subscription here already has this URL');
    expect(again.evidenceRecord).toBeNull();
    expect(
      (await api(production, 'GET', '/v1/webhook-subscriptions', { key: liveKey })).data.data,
    ).toHaveLength(2);
    expect(
      (await api(production, 'GET', '/v1/evidence?kind=webhook_subscription.promote', { key: liveKey })).data
        .data,
    ).toHaveLength(1);
  });

  it('copies only the subscriptions named, and refuses what it cannot do', async () => {
    const { org, liveKey } = await organizationInBoth();
    const first = await subscribe(org.key, { url: PUBLIC_URL, events: ['*'] });
    await subscribe(org.key, { url: PUBLIC_URL_2, events: ['*'] });
    const only = promoted(await promote(org.name, [first.id]));
    expect(only.promoted.map((p) => p.sandboxSubscription)).toEqual([first.id]);
    expect(
      (await api(production, 'GET', '/v1/webhook-subscriptions', { key: liveKey })).data.data,
    ).toHaveLength(1);

    const refusal = async (run: Promise<AdminResult>, param: string, code: string) => {
      const error = await run.then(
        () => undefined,
        (e: unknown) => e as { status: number; param: string; errors: { code: string }[] },
      );
      expect(error).toMatchObject({ status: 400, param, errors: [{ code }] });
    };
    await refusal(promote(org.name, ['whsub_00000000000000000000000000']), 'subscription', 'not_found');
    await refusal(promote('No Such Org'), 'organization', 'not_found');
    const productionOnly = await issueApiKey(production.deps, { organizationName: `Live only ${backend}` });
    expect(productionOnly.key).toMatch(/^sk_live_/);
    await refusal(promote(`Live only ${backend}`), 'organization', 'no_sandbox_organization');
    await refusal(promote(org.name, undefined, sandbox), 'environment', 'not_live');
    const unlinked = { ...production, deps: { ...production.deps, launchGateSource: undefined } };
    await refusal(promote(org.name, undefined, unlinked), 'environment', 'sandbox_not_linked');
    await refusal(
      runAdminCommand(production.deps, {
        name: 'subscriptions.promote',
        organization: org.name,
        operator: 'two words',
      }),
      'operator',
      'invalid_format',
    );
  });
});
