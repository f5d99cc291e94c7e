/**
 * Going live with `mkoba` as an operator runs it: a sandbox and a pilot, each on its own PostgreSQL schema,
 * the pilot linked to the sandbox with MKOBA_SANDBOX_DATABASE_URL. `keys create` in the pilot refuses with
 * exit 1 naming the open gates the sandbox recorded and the pilot's rail with no partner; `launch-gates
 * override` records the operator's reason; an admin key configures the pilot's M-Pesa partner; then the pilot
 * key is issued. PostgreSQL only: pilot and production never run on the embedded database.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSchema, dropSchema } from '../../src/store/postgres.ts';
import { TEST_DATABASE_URL } from '../support/harness.ts';
import { COMMAND_TIMEOUT_MS, http, MkobaProcesses, mkobaEnv, waitForBanner } from './mkobaProcess.ts';

const ORGANIZATION = 'Pilot Co';
/** Twelve commands and a server in a row, each a process start, on a machine that may be busy. */
const COMMANDS_TEST_TIMEOUT_MS = 6 * COMMAND_TIMEOUT_MS;

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}

describe.concurrent('going live: a pilot linked to its sandbox', () => {
  const mkoba = new MkobaProcesses();
  const schemas = {
    sandbox: `e2e_${randomBytes(6).toString('hex')}`,
    pilot: `e2e_${randomBytes(6).toString('hex')}`,
  };
  const urls = { sandbox: '', pilot: '' };

  beforeAll(async () => {
    if (!TEST_DATABASE_URL) return;
    for (const [name, schema] of Object.entries(schemas)) {
      await createSchema(TEST_DATABASE_URL, schema);
      // node-postgres takes libpq's `options` from the URL: each deployment's tables live in their own schema.
      const url = new URL(TEST_DATABASE_URL);
      url.searchParams.set('options', `-c search_path=${schema}`);
      urls[name as keyof typeof urls] = url.toString();
    }
  });
  afterAll(async () => {
    await mkoba.killAll();
    if (TEST_DATABASE_URL)
      for (const schema of Object.values(schemas)) await dropSchema(TEST_DATABASE_URL, schema);
  });

  it.runIf(TEST_DATABASE_URL)(
    'keys create refuses naming the open gates; an override lets the key through',
    {
      timeout: COMMANDS_TEST_TIMEOUT_MS,
    },
    async () => {
      const sandbox = mkobaEnv({ MKOBA_ENV: 'sandbox', DATABASE_URL: urls.sandbox });
      const pilot = mkobaEnv({
        MKOBA_ENV: 'pilot',
        DATABASE_URL: urls.pilot,
        MKOBA_SANDBOX_DATABASE_URL: urls.sandbox,
        MKOBA_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
        PORT: '0',
      });

      // The organization integrates in the sandbox (sandbox keys need no gates), names its contacts there
      // (here through its database's own evaluation: listing evaluates), and is evaluated.
      const sandboxKey = await mkoba.run(['keys', 'create', '--organization', ORGANIZATION], sandbox);
      expect(sandboxKey.code, sandboxKey.stderr).toBe(0);
      expect(sandboxKey.stdout).toMatch(/^sk_sandbox_/);
      const evaluated = await mkoba.run(['launch-gates', 'list', '--organization', ORGANIZATION], sandbox);
      expect(evaluated.code, evaluated.stderr).toBe(0);
      expect(lines(evaluated.stdout)[0]).toMatch(
        /^mobile_money\/business_verified\topen\t\S+\tmissing: legal_entity$/,
      );
      expect(evaluated.stderr).toContain(`${ORGANIZATION}: 6 of 6 launch gate(s) open`);

      // The pilot reads the sandbox's record: every gate open, so no key, and exit 1 naming them.
      const refused = await mkoba.run(['keys', 'create', '--organization', ORGANIZATION], pilot);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain(
        `no pilot key for '${ORGANIZATION}': 7 launch gate(s) open: mobile_money/business_verified, mobile_money/contacts_named, mobile_money/policies_configured, mobile_money/webhook_endpoint_verified, mobile_money/sandbox_scenario_completed, mobile_money/reconciliation_run, mobile_money/rail_providers_configured (missing: mobile_money (mpesa_daraja or mtn_momo)).`,
      );
      // The sandbox's recorded gates, then the pilot's own rail providers, decided now.
      const seen = await mkoba.run(['launch-gates', 'list', '--organization', ORGANIZATION], pilot);
      expect(seen.code, seen.stderr).toBe(0);
      expect(lines(seen.stdout).slice(0, 6)).toEqual(lines(evaluated.stdout));
      expect(lines(seen.stdout)[6]).toMatch(/^mobile_money\/rail_providers_configured\topen\b/);

      const usage = await mkoba.run(['launch-gates', 'override', '--organization', ORGANIZATION], pilot);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('needs --reason');

      const overridden = await mkoba.run(
        [
          'launch-gates',
          'override',
          '--organization',
          ORGANIZATION,
          '--reason',
          'first pilot, reviewed with the compliance officer',
        ],
        pilot,
      );
      expect(overridden.code, overridden.stderr).toBe(0);
      expect(lines(overridden.stdout)).toHaveLength(6);
      expect(lines(overridden.stdout)[0]).toMatch(
        /^mobile_money\/business_verified\toverridden\t\S+\toverridden: first pilot, reviewed with the compliance officer$/,
      );
      expect(overridden.stderr).toMatch(
        /overrode 6 launch gate\(s\) of Pilot Co \(org_\S+\); recorded as evidence/,
      );

      // The overrides cover the recorded gates, not a rail with no partner: an admin key (which moves no
      // money) configures the pilot's M-Pesa partner, and then the key is issued.
      const stillRefused = await mkoba.run(['keys', 'create', '--organization', ORGANIZATION], pilot);
      expect(stillRefused.code).toBe(1);
      expect(stillRefused.stderr).toContain('mobile_money/rail_providers_configured');
      const admin = await mkoba.run(
        ['keys', 'create', '--organization', ORGANIZATION, '--scopes', 'admin'],
        pilot,
      );
      expect(admin.code, admin.stderr).toBe(0);
      const server = await mkoba.start(['serve'], pilot);
      const banner = await waitForBanner(server);
      const partner = await http('POST', `${banner.baseUrl}/rail-partners`, admin.stdout.trim(), {
        partner: 'mpesa_daraja',
        settings: {
          base_url: 'https://api.safaricom.co.ke',
          short_code: '600996',
          initiator_name: 'mkoba-api',
        },
        credentials: {
          consumer_key: 'pilot-consumer-key',
          consumer_secret: 'pilot-consumer-secret',
          security_credential: 'pilot-security-credential',
          passkey: 'pilot-passkey',
        },
      });
      expect(partner.status, JSON.stringify(partner.body)).toBe(201);
      const issued = await mkoba.run(['keys', 'create', '--organization', ORGANIZATION], pilot);
      expect(issued.code, issued.stderr).toBe(0);
      expect(issued.stdout).toMatch(/^sk_pilot_[A-Za-z0-9]{32}\n$/);

      // The override, the two keys the operator issued (`api_key.created`) and the partner's configuration
      // (`rail_partner.update`) are in the pilot's evidence chain, which verifies.
      const verified = await mkoba.run(['evidence', 'verify'], pilot);
      expect(verified.code, verified.stderr).toBe(0);
      expect(verified.stderr).toMatch(/1 chain\(s\), 4 record\(s\), all intact/);
    },
  );
});
