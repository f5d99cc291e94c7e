/**
 * How every CSV the service writes is laid out (RFC 4180), and the one rule that keeps a CSV cell from being
 * read as a formula by a spreadsheet. Exports and wallet statements both write through here.
 */
import { stringify } from 'csv-stringify/sync';

/** Characters that make a spreadsheet treat a cell as a formula (OWASP's list, with tab and carriage return). */
const FORMULA_TRIGGERS = new Set(['=', '+', '-', '@', '\t', '\r']);

/**
 * A CSV cell as a spreadsheet will read it safely: text starting with a formula character is prefixed with
 * a quote, which spreadsheets show as text. Numbers stay numbers: a negative amount is exported as `-12.50`
 * only from the amount columns, which are decimal strings checked here.
 */
export function neutraliseCell(value: string): string {
  if (value === '' || !FORMULA_TRIGGERS.has(value.charAt(0))) return value;
  if (/^-\d+(\.\d+)?$/.test(value)) return value;
  return `'${value}`;
}

/** RFC 4180 §2: every record, the last one too, ends in CRLF. */
export const CSV_RECORD_DELIMITER = '\r\n';

/**
 * Records as RFC 4180 CSV, each cell neutralised (a null is an empty cell): CRLF after every record, and a
 * cell with a comma, a double quote or any line break (a lone CR or LF too, which readers also break on)
 * quoted, its double quotes doubled. Every CSV the service writes goes through here.
 */
export function csvRecords(rows: readonly (readonly (string | null)[])[]): string {
  return stringify(
    rows.map((cells) => cells.map((c) => (c === null ? '' : neutraliseCell(c)))),
    { record_delimiter: CSV_RECORD_DELIMITER, quoted_match: /[\r\n]/ },
  );
}
