/**
 * A statement's lines in the format it came in: our own lines (`mkoba_json`, as JSON or CSV rows), or a
 * partner's settlement report as its portal exports it (CSV), read by domain/partnerStatements.ts. Every
 * faulty row refuses the whole statement (422 `statement_invalid`, each fault with its row and column).
 */
import { AppError, validationError } from '../../../domain/errors.ts';
import { requireOneOf } from '../../../domain/json.ts';
import { isCurrency, parseAmount } from '../../../domain/money.ts';
import {
  DIRECTION_OF_FORMAT,
  NETWORK_OF_FORMAT,
  PARTNER_STATEMENT_READERS,
  RAILS_OF_FORMAT,
  STATEMENT_FORMATS,
  type StatementFormat,
} from '../domain/partnerStatements.ts';
import {
  parseStatementLines,
  RECONCILIATION_STATEMENT_LINES_MAX,
  type StatementFault,
  type StatementLine,
} from '../domain/reconciliation.ts';
import type { StatementCoverage } from '../repository/reconciliation.ts';

/** Rows of preamble a partner's export may print above its header (title, period, account), at most. */
export const PARTNER_PREAMBLE_ROWS_MAX = 20;

export interface StatementContent {
  format?: string | undefined;
  /** Our own lines (`mkoba_json`). */
  lines?: readonly unknown[] | undefined;
  /** A partner's export as uploaded: its CSV records, preamble and header included. */
  records?: readonly (readonly string[])[] | undefined;
}

export function checkStatementFormat(format: string | undefined): StatementFormat {
  return requireOneOf(format ?? 'mkoba_json', STATEMENT_FORMATS, 'format');
}

function refuseFaults(faults: readonly StatementFault[]): void {
  if (faults.length === 0) return;
  throw new AppError({
    status: 422,
    code: 'statement_invalid',
    title: 'Invalid statement',
    detail: `${faults.length} line(s) are invalid; nothing was imported. Each is listed in errors with its row and field.`,
    param: faults[0]?.param,
    errors: [...faults],
  });
}

const tooMany = () =>
  validationError(
    'lines',
    `a statement has at most ${RECONCILIATION_STATEMENT_LINES_MAX} lines`,
    'out_of_range',
  );

/**
 * The transfers a statement of `rail` in `format` covers: that rail's, or, for a partner's own report,
 * every rail the partner carries (the rail named must be one), on mobile money its network only, and the
 * one direction it lists, if it lists one.
 */
export function statementCoverage(format: StatementFormat, rail: string): StatementCoverage {
  if (format === 'mkoba_json') return { rails: [rail], network: null, direction: null };
  const rails = RAILS_OF_FORMAT[format];
  if (!(rails as readonly string[]).includes(rail)) {
    throw validationError('rail', `a ${format} covers the rails ${rails.join(', ')}`, 'invalid_value');
  }
  return { rails, network: NETWORK_OF_FORMAT[format], direction: DIRECTION_OF_FORMAT[format] };
}

/** The statement's lines, checked, in the format they came in. */
export function statementLinesOf(input: StatementContent): {
  format: StatementFormat;
  lines: StatementLine[];
} {
  const format = checkStatementFormat(input.format);
  if (format === 'mkoba_json') {
    const raw = input.lines ?? [];
    if (raw.length > RECONCILIATION_STATEMENT_LINES_MAX) throw tooMany();
    const { lines, faults } = parseStatementLines(raw, (v, c, p) => parseAmount(v, c, p), isCurrency);
    refuseFaults(faults);
    return { format, lines };
  }
  if (!input.records) {
    throw validationError('format', `${format} is read from a CSV upload (text/csv)`, 'invalid_value');
  }
  const { lines, faults } = PARTNER_STATEMENT_READERS[format](input.records);
  refuseFaults(faults);
  if (lines.length > RECONCILIATION_STATEMENT_LINES_MAX) throw tooMany();
  return { format, lines };
}
