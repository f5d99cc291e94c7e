/**
 * A production deployment linked to a sandbox, as MKOBA_SANDBOX_DATABASE_URL links them, for
 * `mkoba subscriptions promote`; and a promotion's result, narrowed.
 */
import { type AdminResult, runAdminCommand } from '../../src/app/admin.ts';
import { type Backend, startTestApp, type TestApp } from './harness.ts';

export interface LinkedDeployments {
  sandbox: TestApp;
  production: TestApp;
  close(): Promise<void>;
}

export async function startLinkedDeployments(backend: Backend): Promise<LinkedDeployments> {
  const sandbox = await startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true });
  const production = await startTestApp(backend, 'production');
  production.deps.launchGateSource = sandbox.db.store;
  return {
    sandbox,
    production,
    async close() {
      await production.close();
      await sandbox.close();
    },
  };
}

/** `mkoba subscriptions promote` run by the operator `ops-amina` in `t`. */
export function promoteSubscriptions(t: TestApp, organization: string, subscriptions?: string[]) {
  return runAdminCommand(t.deps, {
    name: 'subscriptions.promote',
    organization,
    operator: 'ops-amina',
    subscriptions,
  });
}

export function promotionOf(result: AdminResult) {
  if (result.name !== 'subscriptions.promote') throw new Error(`unexpected ${result.name}`);
  return result;
}
