/**
 * Going live with `mkoba` as an operator runs it: a sandbox and a pilot, each on its own PostgreSQL schema,
 * the pilot linked to the sandbox with MKOBA_SANDBOX_DATABASE_URL. `keys create` in the pilot refuses with
 * exit 1 naming the open gates the sandbox recorded; `launch-gates override` records the operator's reason;
 * then the pilot key is issued. PostgreSQL only: pilot and production never run on the embedded database.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSchema, dropSchema } from '../../src/store/postgres.ts';
import { TEST_DATABASE_URL } from '../support/harness.ts';
import { COMMAND_TIMEOUT_MS, MkobaProcesses, mkobaEnv } from './mkobaProcess.ts';

const ORGANIZATION = 'Pilot Co';
/** Nine commands in a row, each a process start, on a machine that may be busy. */
const COMMANDS_TEST_TIMEOUT_MS = 4 * COMMAND_TIMEOUT_MS;

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
        `no pilot key for '${ORGANIZATION}': 6 launch gate(s) open: mobile_money/business_verified, mobile_money/contacts_named, mobile_money/policies_configured, mobile_money/webhook_endpoint_verified, mobile_money/sandbox_scenario_completed, mobile_money/reconciliation_run.`,
      );
      const seen = await mkoba.run(['launch-gates', 'list', '--organization', ORGANIZATION], pilot);
      expect(seen.code, seen.stderr).toBe(0);
      expect(lines(seen.stdout)).toEqual(lines(evaluated.stdout));

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

      const issued = await mkoba.run(['keys', 'create', '--organization', ORGANIZATION], pilot);
      expect(issued.code, issued.stderr).toBe(0);
      expect(issued.stdout).toMatch(/^sk_pilot_[A-Za-z0-9]{32}\n$/);

      // The override and the key the operator issued (`api_key.created`) are in the pilot's evidence chain,
      // which verifies.
      const verified = await mkoba.run(['evidence', 'verify'], pilot);
      expect(verified.code, verified.stderr).toBe(0);
      expect(verified.stderr).toMatch(/1 chain\(s\), 2 record\(s\), all intact/);
    },
  );
});
