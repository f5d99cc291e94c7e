/**
 * Who decides a verification. The sandbox has a simulated provider that decides from magic numbers; an
 * organization configured with Smile ID has Smile ID decide, asynchronously (useCases/smileId/); otherwise
 * a production verification waits for an operator's decision (`POST /v1/verifications/{id}/approve` or
 * `/reject`). A synchronous provider adapter goes behind this interface,
 * and calls its provider only through the outbound address guard: `guardedFetch(outboundPolicyFor(environment))`
 * from src/outbound/guard.ts (HTTPS to public addresses in pilot and production, each connection checked),
 * never the global `fetch` (test/insider/edges.test.ts fails on a server file that does).
 */
import type { Environment } from '../../../domain/access.ts';
import {
  type ProviderOutcome,
  sandboxOutcome,
  type VerificationSubmission,
} from '../../../domain/verifications.ts';

export interface VerificationProvider {
  /** Recorded as who decided. */
  name: 'sandbox_provider';
  /** The outcome of a new submission: a decision now, or later (a deferred decision). */
  decide(submission: VerificationSubmission, today: Date): ProviderOutcome;
  /** The outcome of a deferred decision that is due. */
  decideDeferred(submission: VerificationSubmission): ProviderOutcome;
}

export const sandboxVerificationProvider: VerificationProvider = {
  name: 'sandbox_provider',
  decide: sandboxOutcome,
  decideDeferred: () => ({ status: 'verified' }),
};

/** The provider of an environment; none in production, where operators decide. */
export function verificationProviderFor(environment: Environment): VerificationProvider | undefined {
  return environment === 'sandbox' ? sandboxVerificationProvider : undefined;
}
