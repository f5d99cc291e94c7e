/**
 * CSV uploads (RFC 4180, parsed by csv-parse): rows keyed by their lower-cased header, and the query
 * parameters that stand in for a JSON body's top-level fields.
 */
import { parse } from 'csv-parse/sync';
import { validationError } from '../domain/errors.ts';

/** The rows of an uploaded CSV, at most `maxRows` of them read (one more is read to tell "too many"). */
export function rowsOfCsvUpload(text: string, maxRows: number): Record<string, string>[] {
  try {
    return parse(text, {
      columns: (header: string[]) => header.map((h) => h.trim().toLowerCase()),
      skip_empty_lines: true,
      bom: true,
      to_line: maxRows + 2,
    }) as Record<string, string>[];
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
