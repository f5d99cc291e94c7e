/**
 * Sanctions screening of a party (a customer, a transfer's counterparty) against the active list, as this
 * process has it indexed (src/modules/compliance/useCases/sanctions/screeningIndex.ts).
 * This is the one entry point for the use cases that screen; it reads no transaction state and writes
 * nothing, so a caller may screen before its own transaction and record the result as its evidence.
 */

import type { Deps } from '../../../../app/deps.ts';
import { validationError } from '../../../../domain/errors.ts';
import {
  isCountryCode,
  parseDateOfBirth,
  SANCTIONS_NAME_CHARS_MAX,
} from '../../../../domain/screening/listFile.ts';
import { type PartyType, SCREENING_MATCH_SCORE_MIN_BP } from '../../../../domain/screening/matching.ts';
import type { ScreeningHit, ScreeningQuery } from '../../../../domain/screening/screeningIndex.ts';
import { screeningIndexInUse } from './screeningIndex.ts';

export interface ScreenPartyInput {
  /** The party's name as given (any case, diacritics, punctuation, honorifics, word order). */
  name: string;
  /** When known: a person is never matched to an entity entry, nor the reverse. */
  type?: PartyType | undefined;
  /** ISO 3166-1 alpha-2 (either case). */
  country?: string | undefined;
  /** YYYY-MM-DD or YYYY. */
  dateOfBirth?: string | undefined;
}

export interface ScreeningResult {
  /**
   * The list version screened against (`sl_…`), or null when no version is active: then nothing was
   * compared, the decision is `clear` with no hits, and it is the caller's to decide whether an unscreened
   * party may pass.
   */
  listVersionId: string | null;
  /** `hit` when at least one entry reached `scoreMin`, else `clear`. */
  decision: 'clear' | 'hit';
  /** The threshold applied (SCREENING_MATCH_SCORE_MIN_BP), in basis points. */
  scoreMin: number;
  /** The entries that reached it, best first, at most SCREENING_HITS_MAX; scores in basis points. */
  hits: ScreeningHit[];
}

/** A party's fields checked and normalised; throws the 400 that names the field at fault. */
function checkedParty(input: ScreenPartyInput): ScreeningQuery {
  const name = input.name.trim();
  if (name === '' || name.length > SANCTIONS_NAME_CHARS_MAX) {
    throw validationError(
      'name',
      `name must be 1 to ${SANCTIONS_NAME_CHARS_MAX} characters`,
      'invalid_value',
    );
  }
  const country = input.country?.trim().toUpperCase() || undefined;
  if (country !== undefined && !isCountryCode(country)) {
    throw validationError('country', 'country must be an ISO 3166-1 alpha-2 code', 'invalid_value');
  }
  const dateOfBirth = input.dateOfBirth?.trim() || undefined;
  if (dateOfBirth !== undefined && parseDateOfBirth(dateOfBirth) === undefined) {
    throw validationError('date_of_birth', 'date_of_birth must be YYYY-MM-DD or YYYY', 'invalid_format');
  }
  return { name, type: input.type, country, dateOfBirth };
}

/**
 * Screens several parties (a submission's legal name and its owners) against one list version, the same
 * for all of them even if the process switches lists meanwhile, so that one version id records them all.
 * Every party is checked before any is screened; see screenParty.
 */
export async function screenParties(
  deps: Deps,
  inputs: readonly ScreenPartyInput[],
): Promise<ScreeningResult[]> {
  const queries = inputs.map(checkedParty);
  const index = await screeningIndexInUse(deps);
  return queries.map((query) => {
    if (!index)
      return { listVersionId: null, decision: 'clear', scoreMin: SCREENING_MATCH_SCORE_MIN_BP, hits: [] };
    const hits = index.search(query);
    return {
      listVersionId: index.listVersionId,
      decision: hits.length > 0 ? 'hit' : 'clear',
      scoreMin: SCREENING_MATCH_SCORE_MIN_BP,
      hits,
    };
  });
}

/**
 * Screens one party against the list version this process screens with: the newest it has built, which
 * is the active version within SANCTIONS_LIST_CHECK_INTERVAL_MS of its activation plus the time its index
 * takes to build; meanwhile the previous version (see screeningIndexInUse). `listVersionId` is the version
 * actually searched.
 *
 * What decides it: the party's name and each entry's name and aliases are normalised (case, diacritics,
 * punctuation, honorifics, legal-form words, word order: normalizeName) and scored with fuzzball
 * (nameScoreBp); the date-of-birth, country and type rules then rule an entry out or lower its score
 * (compareFacts); an entry whose final score is at least SCREENING_MATCH_SCORE_MIN_BP (8 800) is a hit.
 * Each hit carries the entry (its list id, name, program, type, country, date of birth), the name or
 * alias that matched, the name score and the final score (integers in basis points, 10 000 = identical
 * normalised names) and how each fact compared (`match`, `mismatch`, `not_compared`). The result is plain
 * JSON (no floats), ready to be stored as evidence with its list version.
 *
 * Throws a 400 validation error naming `name`, `country` or `date_of_birth` when one is malformed.
 */
export async function screenParty(deps: Deps, input: ScreenPartyInput): Promise<ScreeningResult> {
  const [result] = await screenParties(deps, [input]);
  if (!result) throw new Error('screening one party returned no result');
  return result;
}
