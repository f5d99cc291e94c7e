/**
 * Name normalisation for sanctions screening, applied alike to list names and to the names screened, so
 * that case, diacritics, punctuation, honorifics, legal-form words and word order never decide a match.
 */

/**
 * Titles and honorifics dropped wherever they stand in a name ("Dr.", "Sheikh", "Alhaji", "H.E."): they
 * are worn or dropped at will, so a list entry must hit with or without them. Compared after the rest of
 * the normalisation (lower case, no dots).
 */
export const HONORIFICS: readonly string[] = [
  'mr',
  'mrs',
  'ms',
  'miss',
  'mx',
  'dr',
  'prof',
  'professor',
  'sir',
  'dame',
  'lady',
  'lord',
  'sheikh',
  'sheik',
  'shaikh',
  'alhaji',
  'alhaja',
  'hajji',
  'haji',
  'hajia',
  'hon',
  'honourable',
  'honorable',
  'rev',
  'reverend',
  'pastor',
  'imam',
  'mallam',
  'chief',
  'eng',
  'engr',
  'gen',
  'general',
  'col',
  'colonel',
  'capt',
  'captain',
  'maj',
  'major',
  'lt',
  'sgt',
  'he', // "H.E." (His or Her Excellency) once its dots are gone
  'excellency',
];

/**
 * Legal-form words of an entity's name ("Ltd", "LLC", "S.A."), dropped like honorifics: "Zenith Maritime
 * Ltd" and "Zenith Maritime Limited" are the same company to a screener.
 */
export const LEGAL_FORM_WORDS: readonly string[] = [
  'ltd',
  'limited',
  'llc',
  'llp',
  'inc',
  'incorporated',
  'corp',
  'corporation',
  'co',
  'company',
  'plc',
  'sa',
  'sarl',
  'gmbh',
  'ag',
  'bv',
  'nv',
  'pty',
  'pvt',
  'fze',
  'fzco',
  'jsc',
  'ojsc',
];

const DROPPED_WORDS = new Set([...HONORIFICS, ...LEGAL_FORM_WORDS]);

/** Letters NFKD does not decompose into a base letter and a mark. */
const LETTER_TRANSLITERATIONS: Readonly<Record<string, string>> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  ł: 'l',
  ı: 'i',
  þ: 'th',
  ħ: 'h',
};
const TRANSLITERATED = new RegExp(`[${Object.keys(LETTER_TRANSLITERATIONS).join('')}]`, 'gu');
const COMBINING_MARKS = /\p{M}+/gu;
/** Apostrophes join what they separate (O'Brien is obrien, N'Diaye is ndiaye). */
const APOSTROPHES = /['’‘`´ʼ]/gu;
const DOTS = /\./gu;
/** Anything that is not a letter or a digit separates words. */
const SEPARATORS = /[^\p{L}\p{N}]+/gu;

/** Lower case, no diacritics, words of letters and digits only: the words of a name, in their order. */
export function nameWords(name: string): string[] {
  const folded = name
    .normalize('NFKD')
    .replace(COMBINING_MARKS, '')
    .toLowerCase()
    .replace(TRANSLITERATED, (letter) => LETTER_TRANSLITERATIONS[letter] ?? letter)
    .replace(APOSTROPHES, '')
    // "H.E." and "S.A." become one word, so that the honorific and legal-form lists can name them.
    .replace(DOTS, '');
  return folded.split(SEPARATORS).filter((word) => word !== '');
}

/**
 * The normalised form of a name: its distinct words without honorifics and legal-form words (unless that
 * would leave nothing), sorted, joined by single spaces. Empty when the name has no letter or digit.
 */
export function normalizeName(name: string): string {
  const words = nameWords(name);
  const kept = words.filter((word) => !DROPPED_WORDS.has(word));
  return [...new Set(kept.length > 0 ? kept : words)].sort().join(' ');
}
