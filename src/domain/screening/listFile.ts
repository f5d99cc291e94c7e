/**
 * The sanctions list file: a CSV in the shape of a public consolidated list, one entry per record under a
 * header row `id,name,aliases,type,country,date_of_birth,program`. This module checks a header and one
 * record at a time and says which line and field is at fault; reading the file is the importer's.
 */
import type { PartyType } from './matching.ts';
import { normalizeName } from './normalize.ts';
import type { ScreeningListEntry } from './screeningIndex.ts';

export const SANCTIONS_LIST_COLUMNS = [
  'id',
  'name',
  'aliases',
  'type',
  'country',
  'date_of_birth',
  'program',
] as const;
export type SanctionsListColumn = (typeof SANCTIONS_LIST_COLUMNS)[number];

/** Larger than any consolidated list published today (tens of MB), small enough to stream in minutes. */
export const SANCTIONS_LIST_FILE_BYTES_MAX = 256 * 1024 * 1024;
/** Entries in one list version at most (the largest public lists hold tens of thousands). */
export const SANCTIONS_LIST_ENTRIES_MAX = 1_000_000;
/** Aliases of one entry at most. */
export const SANCTIONS_ALIASES_PER_ENTRY_MAX = 100;
export const SANCTIONS_ENTRY_ID_CHARS_MAX = 64;
export const SANCTIONS_NAME_CHARS_MAX = 300;
export const SANCTIONS_PROGRAM_CHARS_MAX = 200;
/** One record's characters at most: a name, a hundred aliases and the rest. */
export const SANCTIONS_RECORD_CHARS_MAX = 64 * 1024;
export const SANCTIONS_ALIAS_SEPARATOR = ';';
/** Plausible years of birth for a list entry. */
export const SANCTIONS_BIRTH_YEAR_MIN = 1850;
export const SANCTIONS_BIRTH_YEAR_MAX = 2100;

/** A record of the file, checked: the entry the screening index holds, its normalised forms made at import. */
export type SanctionsListEntryInput = ScreeningListEntry;

/** A file refused: the line (1 is the header) and the field at fault, when there is one. */
export class SanctionsListFileError extends Error {
  constructor(
    readonly line: number | undefined,
    readonly field: string | undefined,
    readonly reason: string,
  ) {
    const where = [line === undefined ? '' : `line ${line}`, field === undefined ? '' : `field ${field}`]
      .filter(Boolean)
      .join(', ');
    super(where ? `${where}: ${reason}` : reason);
    this.name = 'SanctionsListFileError';
  }
}

/** The position of each column in the file's records, from its header row (line 1). */
export type ColumnPositions = Record<SanctionsListColumn, number>;

export function readHeader(header: readonly string[]): ColumnPositions {
  const names = header.map((h) => h.trim().toLowerCase());
  const positions: Partial<ColumnPositions> = {};
  names.forEach((name, index) => {
    if (!(SANCTIONS_LIST_COLUMNS as readonly string[]).includes(name)) {
      throw new SanctionsListFileError(
        1,
        name || `#${index + 1}`,
        `unknown column; the header must name ${SANCTIONS_LIST_COLUMNS.join(',')}`,
      );
    }
    const column = name as SanctionsListColumn;
    if (positions[column] !== undefined) throw new SanctionsListFileError(1, column, 'column named twice');
    positions[column] = index;
  });
  for (const column of SANCTIONS_LIST_COLUMNS) {
    if (positions[column] === undefined) {
      throw new SanctionsListFileError(1, column, 'column missing from the header');
    }
  }
  return positions as ColumnPositions;
}

const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });
const COUNTRY_PATTERN = /^[A-Z]{2}$/;
const DATE_PATTERN = /^(\d{4})(?:-(\d{2})-(\d{2}))?$/;
/** Control characters have no place in a name and would only hide one name behind another. */
const CONTROL_CHARACTERS = /\p{Cc}/u;

/** An ISO 3166-1 alpha-2 code the runtime's region data knows (XK, Kosovo, included). */
export function isCountryCode(code: string): boolean {
  return COUNTRY_PATTERN.test(code) && REGION_NAMES.of(code) !== code;
}

function isCalendarDate(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** YYYY-MM-DD (a real date) or YYYY, within the plausible years; undefined when neither. */
export function parseDateOfBirth(text: string): string | undefined {
  const match = DATE_PATTERN.exec(text);
  if (!match) return undefined;
  const year = Number(match[1]);
  if (year < SANCTIONS_BIRTH_YEAR_MIN || year > SANCTIONS_BIRTH_YEAR_MAX) return undefined;
  if (match[2] !== undefined && !isCalendarDate(year, Number(match[2]), Number(match[3]))) return undefined;
  return text;
}

function checkedName(line: number, field: SanctionsListColumn, text: string): string {
  if (text.length > SANCTIONS_NAME_CHARS_MAX) {
    throw new SanctionsListFileError(line, field, `longer than ${SANCTIONS_NAME_CHARS_MAX} characters`);
  }
  if (CONTROL_CHARACTERS.test(text)) {
    throw new SanctionsListFileError(line, field, 'holds a control character');
  }
  return text;
}

/**
 * One record (the fields of the line ending at `line`) as an entry, or the error naming the first field
 * at fault. Values are trimmed; empty optional fields are null.
 */
export function readRecord(
  line: number,
  record: readonly string[],
  columns: ColumnPositions,
): SanctionsListEntryInput {
  if (record.length > SANCTIONS_LIST_COLUMNS.length) {
    throw new SanctionsListFileError(
      line,
      undefined,
      `${record.length} fields, but the header has ${SANCTIONS_LIST_COLUMNS.length}`,
    );
  }
  const value = (column: SanctionsListColumn): string => {
    const text = record[columns[column]];
    if (text === undefined) {
      throw new SanctionsListFileError(
        line,
        column,
        `missing: the record has ${record.length} fields, the header ${SANCTIONS_LIST_COLUMNS.length}`,
      );
    }
    return text.trim();
  };
  const entryId = readEntryId(line, value('id'));
  const { name, nameNormalized } = readName(line, value('name'));
  const { aliases, aliasesNormalized } = readAliases(line, value('aliases'));
  const type = readPartyType(line, value('type'));
  const country = readCountry(line, value('country'));
  const dateOfBirth = readRecordDateOfBirth(line, value('date_of_birth'));
  const program = readProgram(line, value('program'));
  return { entryId, name, aliases, type, country, dateOfBirth, program, nameNormalized, aliasesNormalized };
}

function readEntryId(line: number, entryId: string): string {
  if (entryId === '') throw new SanctionsListFileError(line, 'id', 'empty');
  if (entryId.length > SANCTIONS_ENTRY_ID_CHARS_MAX || CONTROL_CHARACTERS.test(entryId)) {
    throw new SanctionsListFileError(
      line,
      'id',
      `must be at most ${SANCTIONS_ENTRY_ID_CHARS_MAX} printable characters`,
    );
  }
  return entryId;
}

function readName(line: number, text: string): { name: string; nameNormalized: string } {
  const name = checkedName(line, 'name', text);
  if (name === '') throw new SanctionsListFileError(line, 'name', 'empty');
  const nameNormalized = normalizeName(name);
  if (nameNormalized === '') throw new SanctionsListFileError(line, 'name', 'has no letter or digit');
  return { name, nameNormalized };
}

/** The aliases, separated by SANCTIONS_ALIAS_SEPARATOR; empty ones are dropped. */
function readAliases(line: number, aliasesText: string): { aliases: string[]; aliasesNormalized: string[] } {
  const aliases = aliasesText
    .split(SANCTIONS_ALIAS_SEPARATOR)
    .map((alias) => alias.trim())
    .filter((alias) => alias !== '');
  if (aliases.length > SANCTIONS_ALIASES_PER_ENTRY_MAX) {
    throw new SanctionsListFileError(line, 'aliases', `more than ${SANCTIONS_ALIASES_PER_ENTRY_MAX} aliases`);
  }
  const aliasesNormalized = aliases.map((alias) => {
    const normalized = normalizeName(checkedName(line, 'aliases', alias));
    if (normalized === '') {
      throw new SanctionsListFileError(line, 'aliases', `alias '${alias}' has no letter or digit`);
    }
    return normalized;
  });
  return { aliases, aliasesNormalized };
}

function readPartyType(line: number, text: string): PartyType {
  const typeText = text.toLowerCase();
  if (typeText !== 'person' && typeText !== 'entity') {
    throw new SanctionsListFileError(line, 'type', `must be person or entity (got '${text}')`);
  }
  return typeText;
}

function readCountry(line: number, text: string): string | null {
  const countryText = text.toUpperCase();
  if (countryText !== '' && !isCountryCode(countryText)) {
    throw new SanctionsListFileError(
      line,
      'country',
      `must be an ISO 3166-1 alpha-2 code or empty (got '${text}')`,
    );
  }
  return countryText === '' ? null : countryText;
}

function readRecordDateOfBirth(line: number, dateText: string): string | null {
  const dateOfBirth = dateText === '' ? null : parseDateOfBirth(dateText);
  if (dateOfBirth === undefined) {
    throw new SanctionsListFileError(
      line,
      'date_of_birth',
      `must be YYYY-MM-DD, YYYY or empty, in ${SANCTIONS_BIRTH_YEAR_MIN}–${SANCTIONS_BIRTH_YEAR_MAX} (got '${dateText}')`,
    );
  }
  return dateOfBirth;
}

function readProgram(line: number, program: string): string | null {
  if (program.length > SANCTIONS_PROGRAM_CHARS_MAX || CONTROL_CHARACTERS.test(program)) {
    throw new SanctionsListFileError(
      line,
      'program',
      `must be at most ${SANCTIONS_PROGRAM_CHARS_MAX} printable characters`,
    );
  }
  return program === '' ? null : program;
}
