/**
 * An admin registers where a partner sends payers' own payments (M-Pesa C2B's validation and confirmation
 * addresses): `POST /v1/rail-partners/{id}/credit-urls`. The partner is called before the write's
 * transaction (a retry with the same Idempotency-Key replays the answer and calls nothing).
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { requestActor } from '../../../http/auth.ts';
import { preparedWrite, writeOperation, written } from '../../../http/routeKit.ts';
import {
  type CreditUrlsRegistered,
  recordCreditUrlRegistration,
  registerCreditUrls,
} from '../useCases/creditUrls.ts';
import { railPartnerDirectory } from '../useCases/directory.ts';
import { ACCESS, railPartnerParams } from './schemas.ts';

function presentRegistration(registered: CreditUrlsRegistered, at: Date) {
  const { config, registration } = registered;
  return {
    object: 'rail_partner_credit_urls',
    rail_partner: config.id,
    partner: config.partner,
    account: registration.account,
    validation_url: registration.validationUrl,
    confirmation_url: registration.confirmationUrl,
    when_unanswered: registration.whenUnanswered,
    registered_at: at.toISOString(),
  };
}

export function creditUrlsRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string } }>(
    '/v1/rail-partners/:id/credit-urls',
    writeOperation({
      ...ACCESS.admin,
      operationId: 'registerRailPartnerCreditUrls',
      summary: 'Register payment notification addresses with a partner',
      description:
        'Tells the partner where to send payers’ own payments to the organization (M-Pesa C2B: Register URL for the paybill or till, `stk_short_code` or else `short_code`, with `ResponseType` `Completed`), so a payment quoting a wallet’s virtual account reference or account number is validated against it and credited to it. Safaricom takes a production registration once (changing it means deleting it on their portal first), so this is a deliberate action, not a side effect of configuring the partner. 409 `credit_urls_not_registrable` for a disabled partner, one that takes no registration, or no `MKOBA_PUBLIC_URL`; 503 `rail_unavailable` when the partner refused or could not be reached (nothing registered; ask again). Recorded as evidence (`rail_partner.update`, action `register_credit_urls`).',
      params: railPartnerParams,
      responses: { 200: written('RailPartnerCreditUrls', 'What the partner was told.') },
    }),
    preparedWrite<{ Params: { id: string } }, CreditUrlsRegistered>(
      deps,
      (organizationId, request) =>
        registerCreditUrls(deps, railPartnerDirectory(deps), organizationId, request.params.id),
      async (tx, _organizationId, request, registered) => {
        await recordCreditUrlRegistration(tx, deps, registered, requestActor(request));
        return { status: 200, body: presentRegistration(registered, deps.now()) };
      },
    ),
  );
}
