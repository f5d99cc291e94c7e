/**
 * Screening a new transfer's counterparty: the beneficiary name a mobile-money or bank destination gives
 * (none is given for the other destinations), against the process's active sanctions list. Runs before the
 * ledger writer: it reads no transaction state, and its result travels with the command into the writer,
 * which decides and records it.
 */

import type { Deps } from '../../../app/deps.ts';
import type { ScreeningSummary } from '../../../domain/decisions/transferCompliance.ts';
import { AppError, validationError } from '../../../domain/errors.ts';
import type { ScreeningHit } from '../../../domain/screening/screeningIndex.ts';
import type { Destination } from '../../../domain/transfers.ts';
import { screenParty } from './sanctions/screenParty.ts';

/** The name a destination gives for its beneficiary, and the field it came in. */
function beneficiaryOf(destination: Destination): { name: string; param: string } | undefined {
  if (destination.type === 'mobile_money' && destination.name) {
    return { name: destination.name, param: 'destination.name' };
  }
  if (destination.type === 'bank_account' && destination.account_name) {
    return { name: destination.account_name, param: 'destination.account_name' };
  }
  return undefined;
}

/** A hit as evidence and review findings carry it: snake_case, scores in basis points. */
export function hitFinding(hit: ScreeningHit) {
  return {
    entry_id: hit.entryId,
    entry_name: hit.entryName,
    matched_name: hit.matchedName,
    score_bp: hit.score,
    name_score_bp: hit.nameScore,
    program: hit.program,
    type: hit.type,
    country: hit.country,
    date_of_birth: hit.dateOfBirth,
    checks: { type: hit.checks.type, date_of_birth: hit.checks.dateOfBirth, country: hit.checks.country },
  };
}

export async function screenCounterparty(
  deps: Deps,
  destination: Destination,
): Promise<ScreeningSummary | undefined> {
  const beneficiary = beneficiaryOf(destination);
  if (!beneficiary) return undefined;
  try {
    const result = await screenParty(deps, { name: beneficiary.name });
    return {
      listVersionId: result.listVersionId,
      screenedName: beneficiary.name,
      decision: result.decision,
      hits: result.hits.map(hitFinding),
    };
  } catch (error) {
    // The name is the destination's field: name it so.
    if (error instanceof AppError && error.param === 'name') {
      throw validationError(
        beneficiary.param,
        error.detail.replace(/^name\b/, beneficiary.param),
        error.errors[0]?.code,
      );
    }
    throw error;
  }
}
