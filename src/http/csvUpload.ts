/**
 * CSV uploads (RFC 4180, parsed by csv-parse): rows keyed by their lower-cased header, and the query
 * parameters that stand in for a JSON body's top-level fields.
 */
import { type Options, parse } from 'csv-parse/sync';
import { validationError } from '../domain/errors.ts';

/** The rows of an uploaded CSV, at most `maxRows` of them read (one more is read to tell "too many"). */
export function rowsOfCsvUpload(text: string, maxRows: number): Record<string, string>[] {
  return parsedCsv(text, {
    columns: (header: string[]) => header.map((h) => h.trim().toLowerCase()),
    to_line: maxRows + 2,
  }) as Record<string, string>[];
}

/**
 * The records of an uploaded CSV as cells, rows of any length (a partner's export may print a preamble
 * above its header), at most `maxRecords` of them read.
 */
export function recordsOfCsvUpload(text: string, maxRecords: number): string[][] {
  return parsedCsv(text, { relax_column_count: true, to_line: maxRecords + 1 }) as string[][];
}

function parsedCsv(text: string, options: Options): unknown {
  try {
    return parse(text, { skip_empty_lines: true, bom: true, ...options });
  } catch (error) {
    const e = error as Error & { lines?: number };
    throw validationError(
      'body',
      `The CSV is malformed${e.lines ? ` at line ${e.lines}` : ''}: ${e.message}`,
      'invalid_csv',
    );
  }
}

/** The query parameters a CSV upload must carry, each a 422 `missing` naming it when absent. */
export function requiredUploadFields<Name extends string>(
  query: Partial<Record<Name, string>>,
  names: readonly Name[],
): Record<Name, string> {
  const fields = {} as Record<Name, string>;
  for (const name of names) {
    const value = query[name];
    if (value === undefined) throw validationError(name, `${name} is required with a CSV upload`, 'missing');
    fields[name] = value;
  }
  return fields;
}
