/**
 * The in-memory screening index of one list version: every name and alias of every entry, reachable from
 * the phonetic codes of its words, so that a screening scores a handful of candidates instead of the
 * whole list. Pure: built from entries, searched with a party.
 */
import { doubleMetaphone } from 'double-metaphone';
import {
  compareFacts,
  type FactComparison,
  nameScoreBp,
  type PartyFacts,
  type PartyType,
  SCREENING_MATCH_SCORE_MIN_BP,
  SCREENING_RATIO_MIN,
  tokenSetApplies,
  type WordOverlap,
} from './matching.ts';
import { normalizeName } from './normalize.ts';

/** One entry of a list version, with the normalised forms stored beside it at import. */
export interface ScreeningListEntry {
  /** The list's own id of the entry. */
  entryId: string;
  name: string;
  aliases: readonly string[];
  type: PartyType;
  country: string | null;
  dateOfBirth: string | null;
  program: string | null;
  nameNormalized: string;
  /** In the order of `aliases`. */
  aliasesNormalized: readonly string[];
}

export interface ScreeningHit {
  entryId: string;
  entryName: string;
  /** The entry's name or alias that scored highest. */
  matchedName: string;
  /** The final score in basis points: the name score less the date-of-birth and country penalties. */
  score: number;
  /** The name score alone, in basis points. */
  nameScore: number;
  program: string | null;
  type: PartyType;
  country: string | null;
  dateOfBirth: string | null;
  /** How the facts given compared with the entry's (see compareFacts). */
  checks: { type: FactComparison; dateOfBirth: FactComparison; country: FactComparison };
}

export interface ScreeningQuery extends PartyFacts {
  name: string;
}

/** Hits returned at most, best first: enough for a reviewer, bounded for the evidence. */
export const SCREENING_HITS_MAX = 10;
/** Words of a screened name that select candidates; fuzzball still scores the whole name. */
export const SCREENING_QUERY_WORDS_MAX = 16;
/** Counters wrap well before 2^31. */
const STAMP_MAX = 1 << 30;

/**
 * The keys of one normalised word: its Double Metaphone codes (both), so that spellings of one sound
 * (Mohammed, Muhammad; Smith, Smyth) meet; a word without a sound (digits) is its own key.
 */
function wordKeys(word: string): string[] {
  const [primary, secondary] = doubleMetaphone(word);
  if (primary === '' && secondary === '') return [`w:${word}`];
  return primary === secondary || secondary === '' ? [`m:${primary}`] : [`m:${primary}`, `m:${secondary}`];
}

function distinctWords(normalized: string): string[] {
  return [...new Set(normalized.split(' ').filter((w) => w !== ''))];
}

/**
 * How many of a screened name's words an indexed name must share (by sound) to be scored: all of them
 * but one, and at least one. So one word may be misspelt beyond recognition ("Viktor Xragomirov" is
 * still scored against "Viktor Dragomirov"), and "John Michael Smith" reaches "John Smith".
 */
export function sharedWordsMin(queryWords: number): number {
  return Math.max(1, queryWords - 1);
}

/** Letters, digits and the space each have a count; every other character shares one. */
const LETTER_COUNT_SLOTS = 38;
function letterSlot(code: number): number {
  if (code >= 97 && code <= 122) return code - 97;
  if (code >= 48 && code <= 57) return 26 + code - 48;
  return code === 32 ? 36 : 37;
}
function countLetters(text: string, into: Uint16Array, at: number): void {
  for (let i = 0; i < text.length; i++) {
    const slot = at + letterSlot(text.charCodeAt(i));
    into[slot] = (into[slot] ?? 0) + 1;
  }
}

/**
 * Gathers an index entry by entry, so that a process can build a large list's index in slices between
 * other work (each `add` is a slice) instead of in one long synchronous step; `build` makes the index.
 */
export class ScreeningIndexBuilder {
  readonly entries: ScreeningListEntry[] = [];
  readonly variantEntry: number[] = [];
  readonly variantName: string[] = [];
  readonly variantNormalized: string[] = [];
  readonly wordNumbers = new Map<string, number>();
  readonly wordLengths: number[] = [];
  readonly variantWordStart: number[] = [0];
  readonly variantWords: number[] = [];
  readonly keyNumbers = new Map<string, number>();
  readonly postings: number[][] = [];
  readonly variantKeyStart: number[] = [0];
  readonly variantKeys: number[] = [];

  constructor(readonly listVersionId: string) {}

  add(entries: readonly ScreeningListEntry[]): this {
    for (const entry of entries) {
      const entryIndex = this.entries.length;
      this.entries.push(entry);
      const names = [entry.name, ...entry.aliases];
      const normalized = [entry.nameNormalized, ...entry.aliasesNormalized];
      const seen = new Set<string>();
      normalized.forEach((form, i) => {
        if (form === '' || seen.has(form)) return;
        seen.add(form);
        const variant = this.variantEntry.length;
        this.variantEntry.push(entryIndex);
        this.variantName.push(names[i] ?? entry.name);
        this.variantNormalized.push(form);
        const formWords = distinctWords(form);
        for (const word of formWords) {
          let number = this.wordNumbers.get(word);
          if (number === undefined) {
            number = this.wordLengths.length;
            this.wordNumbers.set(word, number);
            this.wordLengths.push(word.length);
          }
          this.variantWords.push(number);
        }
        this.variantWordStart.push(this.variantWords.length);
        for (const key of new Set(formWords.flatMap(wordKeys))) {
          let number = this.keyNumbers.get(key);
          if (number === undefined) {
            number = this.postings.length;
            this.keyNumbers.set(key, number);
            this.postings.push([]);
          }
          this.postings[number]?.push(variant);
          this.variantKeys.push(number);
        }
        this.variantKeyStart.push(this.variantKeys.length);
      });
    }
    return this;
  }

  build(): ScreeningIndex {
    return new ScreeningIndex(this.listVersionId, this);
  }
}

export class ScreeningIndex {
  readonly entries: readonly ScreeningListEntry[];
  /** Each indexed name (a name or an alias): its entry, its text, its normalised form. */
  private readonly variantEntry: Int32Array;
  private readonly variantName: readonly string[];
  private readonly variantNormalized: readonly string[];
  /** Each distinct word of the index by number; each variant's word numbers (like its keys below). */
  private readonly wordNumbers: ReadonlyMap<string, number>;
  private readonly wordLengths: readonly number[];
  private readonly variantWordStart: Int32Array;
  private readonly variantWords: Int32Array;
  /** Word keys by number, and the variants each key leads to. */
  private readonly keyNumbers: ReadonlyMap<string, number>;
  private readonly postings: Int32Array[];
  /** The key numbers of each variant: variantKeys[variantKeyStart[v] .. variantKeyStart[v + 1]). */
  private readonly variantKeyStart: Int32Array;
  private readonly variantKeys: Int32Array;
  /** Each variant's characters counted by letterSlot: LETTER_COUNT_SLOTS numbers per variant. */
  private readonly variantLetters: Uint16Array;
  // Scratch space of search(), reused: which variants the current search has already gathered.
  private readonly gatheredStamp: Int32Array;
  private searchCounter = 0;

  /** From the whole list at once, or from what a ScreeningIndexBuilder gathered. */
  constructor(
    readonly listVersionId: string,
    source: readonly ScreeningListEntry[] | ScreeningIndexBuilder,
  ) {
    const built =
      source instanceof ScreeningIndexBuilder ? source : new ScreeningIndexBuilder(listVersionId).add(source);
    this.entries = built.entries;
    this.variantName = built.variantName;
    this.variantNormalized = built.variantNormalized;
    this.wordNumbers = built.wordNumbers;
    this.wordLengths = built.wordLengths;
    this.keyNumbers = built.keyNumbers;
    this.postings = built.postings.map((list) => Int32Array.from(list));
    this.variantEntry = Int32Array.from(built.variantEntry);
    this.variantKeyStart = Int32Array.from(built.variantKeyStart);
    this.variantKeys = Int32Array.from(built.variantKeys);
    this.variantWordStart = Int32Array.from(built.variantWordStart);
    this.variantWords = Int32Array.from(built.variantWords);
    this.variantLetters = new Uint16Array(built.variantEntry.length * LETTER_COUNT_SLOTS);
    this.variantNormalized.forEach((form, variant) => {
      countLetters(form, this.variantLetters, variant * LETTER_COUNT_SLOTS);
    });
    this.gatheredStamp = new Int32Array(built.variantEntry.length).fill(-1);
  }

  /** Names and aliases indexed (equal forms of one entry count once). */
  get indexedNames(): number {
    return this.variantEntry.length;
  }

  /** How a variant's words overlap the screened name's (given as word numbers, -1 for a word not indexed). */
  private overlap(variant: number, queryWords: readonly number[]): WordOverlap {
    const start = this.variantWordStart[variant] ?? 0;
    const end = this.variantWordStart[variant + 1] ?? 0;
    let shared = 0;
    let sharedLength = 0;
    for (let i = start; i < end; i++) {
      const word = this.variantWords[i] ?? -1;
      if (!queryWords.includes(word)) continue;
      shared += 1;
      sharedLength += (this.wordLengths[word] ?? 0) + (shared > 1 ? 1 : 0);
    }
    return {
      shared,
      sharedLength,
      queryHasOthers: queryWords.length > shared,
      entryHasOthers: end - start > shared,
    };
  }

  /** Whether a variant has any word of the screened name (most candidates share only a sound). */
  private sharesAnyWord(variant: number, queryWords: readonly number[]): boolean {
    const end = this.variantWordStart[variant + 1] ?? 0;
    for (let i = this.variantWordStart[variant] ?? 0; i < end; i++) {
      if (queryWords.includes(this.variantWords[i] ?? -1)) return true;
    }
    return false;
  }

  /**
   * Twice the characters a variant has in common with the screened name, counted without regard to
   * order, over both lengths: an upper bound of fuzzball's ratio of the two names' words in any order.
   * `querySlots` are the slots the screened name uses, so only those are compared.
   */
  private lettersBound(
    variant: number,
    querySlots: readonly number[],
    queryLetters: Uint16Array,
    queryLength: number,
  ): number {
    const at = variant * LETTER_COUNT_SLOTS;
    let common = 0;
    for (const slot of querySlots) {
      common += Math.min(queryLetters[slot] ?? 0, this.variantLetters[at + slot] ?? 0);
    }
    return (2 * common) / (queryLength + (this.variantNormalized[variant]?.length ?? 0));
  }

  /**
   * Whether nameScoreBp may reach the threshold, from counts alone. Every ratio fuzzball takes compares
   * the two names' words in some order (bounded by lettersBound) or, for the token-set ratio, the shared
   * words with one name's words: exactly 2·S / (S + that name's length), the shared words being its start.
   */
  private mayReachThreshold(
    variant: number,
    overlap: WordOverlap,
    lettersBound: number,
    queryLength: number,
  ): boolean {
    if (lettersBound >= SCREENING_RATIO_MIN) return true;
    if (!tokenSetApplies(overlap)) return false;
    const shared = overlap.sharedLength;
    const shorter = Math.min(queryLength, this.variantNormalized[variant]?.length ?? 0);
    return (2 * shared) / (shared + shorter) >= SCREENING_RATIO_MIN;
  }

  private sharesWord(variant: number, wordKeyNumbers: readonly number[]): boolean {
    const end = this.variantKeyStart[variant + 1] ?? 0;
    for (let i = this.variantKeyStart[variant] ?? 0; i < end; i++) {
      if (wordKeyNumbers.includes(this.variantKeys[i] ?? -1)) return true;
    }
    return false;
  }

  /**
   * The variants sharing at least sharedWordsMin words with the screened name. Such a variant shares at
   * least one of any (words - required + 1) of them, so only the variants of that many of the rarest words
   * are gathered (two at most); from three words on, each is then checked against every word through its
   * own keys. A common word ("Mohammed") costs its long lists only when the name has no rarer word.
   */
  private candidates(words: readonly string[]): number[] {
    if (this.searchCounter >= STAMP_MAX) {
      this.searchCounter = 0;
      this.gatheredStamp.fill(-1);
    }
    const search = this.searchCounter++;
    const byRarity = words
      .map((word) => {
        const numbers = wordKeys(word)
          .map((key) => this.keyNumbers.get(key))
          .filter((n): n is number => n !== undefined);
        const cost = numbers.reduce((sum, n) => sum + (this.postings[n]?.length ?? 0), 0);
        return { numbers, cost };
      })
      .sort((a, b) => a.cost - b.cost);
    const required = sharedWordsMin(words.length);
    const found: number[] = [];
    for (const gathered of byRarity.slice(0, words.length - required + 1)) {
      for (const number of gathered.numbers) {
        for (const variant of this.postings[number] ?? []) {
          if (this.gatheredStamp[variant] === search) continue;
          this.gatheredStamp[variant] = search;
          if (required > 1) {
            let shared = 0;
            for (const word of byRarity) if (this.sharesWord(variant, word.numbers)) shared++;
            if (shared < required) continue;
          }
          found.push(variant);
        }
      }
    }
    return found;
  }

  /**
   * The entries whose name or an alias scores at least SCREENING_MATCH_SCORE_MIN_BP against the party once
   * the facts are compared (compareFacts), best first (ties by entry id), at most SCREENING_HITS_MAX. One
   * hit per entry, through its best-scoring name.
   */
  search(query: ScreeningQuery): ScreeningHit[] {
    const normalized = normalizeName(query.name);
    if (normalized === '') return [];
    const words = distinctWords(normalized).slice(0, SCREENING_QUERY_WORDS_MAX);
    const queryWords = distinctWords(normalized).map((word) => this.wordNumbers.get(word) ?? -1);
    const queryLetters = new Uint16Array(LETTER_COUNT_SLOTS);
    countLetters(normalized, queryLetters, 0);
    const querySlots = [...queryLetters.keys()].filter((slot) => (queryLetters[slot] ?? 0) > 0);
    const best = new Map<number, ScreeningHit>();
    for (const variant of this.candidates(words)) {
      const form = this.variantNormalized[variant] ?? '';
      // Scored only when the score may reach the threshold: most candidates share a sound with the name,
      // few come near it, and counting letters is far cheaper than fuzzball.
      const lettersBound = this.lettersBound(variant, querySlots, queryLetters, normalized.length);
      // Without a shared word only the letters can bring a candidate near (no token-set ratio).
      if (lettersBound < SCREENING_RATIO_MIN && !this.sharesAnyWord(variant, queryWords)) continue;
      const overlap = this.overlap(variant, queryWords);
      if (!this.mayReachThreshold(variant, overlap, lettersBound, normalized.length)) continue;
      const nameScore = nameScoreBp(normalized, form, overlap);
      if (nameScore < SCREENING_MATCH_SCORE_MIN_BP) continue;
      const entryIndex = this.variantEntry[variant] ?? 0;
      const entry = this.entries[entryIndex];
      if (!entry) continue;
      const adjustment = compareFacts(query, entry);
      if (adjustment.ruledOut) continue;
      const score = nameScore - adjustment.penaltyBp;
      if (score < SCREENING_MATCH_SCORE_MIN_BP) continue;
      const previous = best.get(entryIndex);
      if (previous && previous.score >= score) continue;
      best.set(entryIndex, {
        entryId: entry.entryId,
        entryName: entry.name,
        matchedName: this.variantName[variant] ?? entry.name,
        score,
        nameScore,
        program: entry.program,
        type: entry.type,
        country: entry.country,
        dateOfBirth: entry.dateOfBirth,
        checks: { type: adjustment.type, dateOfBirth: adjustment.dateOfBirth, country: adjustment.country },
      });
    }
    return [...best.values()]
      .sort((a, b) => b.score - a.score || (a.entryId < b.entryId ? -1 : a.entryId > b.entryId ? 1 : 0))
      .slice(0, SCREENING_HITS_MAX);
  }
}
