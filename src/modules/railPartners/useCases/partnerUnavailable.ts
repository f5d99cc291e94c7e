/** The answer to a request a partner refused or could not take through its guard: nothing was done there. */
import { AppError } from '../../../domain/errors.ts';
import { RailPartnerUnavailableError } from '../../../rails/partner.ts';

/** The text of what a guarded partner call threw. */
export function partnerErrorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A 503 `rail_unavailable` saying `detail`; a pause or rate limit of the partner's guard tells the caller when
 * to ask again.
 */
export function partnerUnavailable(detail: string, error: unknown): AppError {
  return new AppError({
    status: 503,
    code: 'rail_unavailable',
    title: 'Partner unavailable',
    detail,
    retryAfterSeconds:
      error instanceof RailPartnerUnavailableError ? Math.ceil(error.retryAfterMs / 1000) : undefined,
  });
}
