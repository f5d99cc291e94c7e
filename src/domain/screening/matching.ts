/**
 * How a screened party is compared with one list entry: the name score from a maintained fuzzy-matching
 * library (fuzzball, a port of TheFuzz), then the date-of-birth, country and type rules. Pure: no I/O.
 *
 * Scores are integers in basis points (0 to 10 000, 10 000 an exact match of the normalised names), so
 * they are stored and compared exactly. fuzzball's ratios are whole percents, so a name score is a
 * multiple of 100; the date-of-birth and country rules take off whole basis points.
 */
import { ratio, token_set_ratio } from 'fuzzball';

export type PartyType = 'person' | 'entity';

/**
 * A hit needs at least this score (88.00 %). The name score is fuzzball's ratio of the token-sorted
 * normalised names, 2·M / T (M the characters the two have in common after the fewest insertions and
 * deletions, T both lengths together, rounded to a whole percent): one letter changed in a name of eight
 * letters or more, or a letter added or dropped in one of five or more, stays at or above it ("Viktor Dragomirov" / "Victor Dragomirov":
 * 94 %), while names that share only a first name or a family name fall well below ("Viktor Dragan" /
 * "Viktor Dragomirov": 73 %). Two short names one letter apart ("Li Wei" / "Li Wen": 83 %) are different
 * people and stay below it.
 */
export const SCREENING_MATCH_SCORE_MIN_BP = 8_800;
/** A full score: the normalised names are equal. */
export const SCREENING_SCORE_MAX_BP = 10_000;
/**
 * Dates of birth whose years are further apart than this rule the entry out. Lists often carry an
 * approximate year ("about 1970"), so one year either way is not taken as proof of another person.
 */
export const SCREENING_BIRTH_YEARS_APART_MAX = 1;
/** Both dates of birth known and different, but within SCREENING_BIRTH_YEARS_APART_MAX: the score drops by this. */
export const SCREENING_DATE_OF_BIRTH_MISMATCH_PENALTY_BP = 1_000;
/**
 * Both countries known and different: the score drops by this. Not a rule-out, since a list's country may
 * be one nationality or residence among several, but enough that only a near-exact name still hits.
 */
export const SCREENING_COUNTRY_MISMATCH_PENALTY_BP = 500;

/** How one fact compared: both sides had it and it agreed, disagreed, or one side lacked it. */
export type FactComparison = 'match' | 'mismatch' | 'not_compared';

/** What the screened party gives beside its name. */
export interface PartyFacts {
  type?: PartyType | undefined;
  /** ISO 3166-1 alpha-2, upper case. */
  country?: string | undefined;
  /** YYYY-MM-DD or YYYY. */
  dateOfBirth?: string | undefined;
}

/** What a list entry holds beside its names. */
export interface EntryFacts {
  type: PartyType;
  country: string | null;
  dateOfBirth: string | null;
}

export interface Adjustment {
  /** The entry cannot be this party (type differs, or years of birth too far apart). */
  ruledOut: boolean;
  penaltyBp: number;
  dateOfBirth: FactComparison;
  country: FactComparison;
  type: FactComparison;
}

/** How the words of two normalised names overlap (each word counted once). */
export interface WordOverlap {
  /** Words both names have. */
  shared: number;
  /** The length of the shared words joined by single spaces (fuzzball's "intersection" string). */
  sharedLength: number;
  /** The screened name has a word the entry lacks, and the reverse. */
  queryHasOthers: boolean;
  entryHasOthers: boolean;
}

export function wordOverlap(queryNormalized: string, entryNormalized: string): WordOverlap {
  const queryWords = new Set(queryNormalized.split(' '));
  const entryWords = new Set(entryNormalized.split(' '));
  let shared = 0;
  let sharedLength = 0;
  for (const word of queryWords) {
    if (!entryWords.has(word)) continue;
    shared += 1;
    sharedLength += word.length + (shared > 1 ? 1 : 0);
  }
  return {
    shared,
    sharedLength,
    queryHasOthers: queryWords.size > shared,
    entryHasOthers: entryWords.size > shared,
  };
}

/**
 * Whether fuzzball's token-set ratio counts for a pair: when the names share two words or more, or share
 * one and each has another word. Not when one name is a single word of the other: "John" is not "John
 * Smith".
 */
export function tokenSetApplies(overlap: WordOverlap): boolean {
  return overlap.shared >= 2 || (overlap.shared === 1 && overlap.queryHasOthers && overlap.entryHasOthers);
}

/**
 * The name score of two normalised names (see normalizeName) in basis points: fuzzball's token-sort ratio
 * (the ratio of the token-sorted names, which normalised names already are), or its token-set ratio if
 * higher where that applies (tokenSetApplies). The token-set ratio compares the shared words first and
 * then the rest, so a name that is the other with a middle name or a further family name still scores
 * high ("John Smith" / "John Michael Smith": 100 %), and a typo that moves a word in the sorted order does
 * not undo the match ("Choumi Cxoshukhav" / "Choumi Choshukhav": 94 % where the sorted names give 53 %).
 */
export function nameScoreBp(
  queryNormalized: string,
  entryNormalized: string,
  overlap: WordOverlap = wordOverlap(queryNormalized, entryNormalized),
): number {
  const options = { full_process: false } as const;
  let percent = ratio(queryNormalized, entryNormalized, options);
  if (percent < 100 && tokenSetApplies(overlap)) {
    percent = Math.max(percent, token_set_ratio(queryNormalized, entryNormalized, options));
  }
  return percent * 100;
}

/**
 * The least ratio (0 to 1) that fuzzball rounds to a score of SCREENING_MATCH_SCORE_MIN_BP: a pair whose
 * ratio is certainly below it (see the index's letter-count bound) need not be scored for the sort ratio.
 */
export const SCREENING_RATIO_MIN = (SCREENING_MATCH_SCORE_MIN_BP - 50) / SCREENING_SCORE_MAX_BP;

function birthYear(date: string): number {
  return Number(date.slice(0, 4));
}

function compareDatesOfBirth(party: string | undefined, entry: string | null): FactComparison | 'ruled_out' {
  if (!party || !entry) return 'not_compared';
  if (Math.abs(birthYear(party) - birthYear(entry)) > SCREENING_BIRTH_YEARS_APART_MAX) return 'ruled_out';
  // Compared at the coarser of the two precisions: a year alone matches any date in it.
  const precision = Math.min(party.length, entry.length);
  return party.slice(0, precision) === entry.slice(0, precision) ? 'match' : 'mismatch';
}

/**
 * The date-of-birth, country and type rules, applied only when both sides have the fact:
 * - type: a person is never an entity; a different type rules the entry out;
 * - date of birth: compared at the coarser precision of the two (a year alone against a full date compares
 *   years); years more than SCREENING_BIRTH_YEARS_APART_MAX apart rule the entry out; otherwise a
 *   difference takes SCREENING_DATE_OF_BIRTH_MISMATCH_PENALTY_BP off the score;
 * - country: a difference takes SCREENING_COUNTRY_MISMATCH_PENALTY_BP off the score.
 * Agreement adds nothing: the name decides, the facts can only weaken it.
 */
export function compareFacts(party: PartyFacts, entry: EntryFacts): Adjustment {
  const type: FactComparison =
    party.type === undefined ? 'not_compared' : party.type === entry.type ? 'match' : 'mismatch';
  const dateOfBirth = compareDatesOfBirth(party.dateOfBirth, entry.dateOfBirth);
  const country: FactComparison =
    !party.country || !entry.country
      ? 'not_compared'
      : party.country === entry.country
        ? 'match'
        : 'mismatch';
  const ruledOut = type === 'mismatch' || dateOfBirth === 'ruled_out';
  const penaltyBp =
    (dateOfBirth === 'mismatch' ? SCREENING_DATE_OF_BIRTH_MISMATCH_PENALTY_BP : 0) +
    (country === 'mismatch' ? SCREENING_COUNTRY_MISMATCH_PENALTY_BP : 0);
  return {
    ruledOut,
    penaltyBp,
    dateOfBirth: dateOfBirth === 'ruled_out' ? 'mismatch' : dateOfBirth,
    country,
    type,
  };
}
