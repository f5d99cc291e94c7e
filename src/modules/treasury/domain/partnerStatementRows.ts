/**
 * The reading shared by the partner statement formats, pure: a partner file's rows by its published column
 * names (after any preamble its portal prints), and its cells read as amounts in minor units, UTC days and
 * statuses, each fault named by row and column.
 */
import { type Currency, parseAmount } from '../../../domain/money.ts';
import type { StatementFault } from './reconciliation.ts';

/** A column name as compared: case, surrounding space and a trailing full stop do not matter. */
const normalized = (name: string) => name.trim().toLowerCase().replace(/\.$/, '').replace(/\s+/g, ' ');

/** One data row of a partner file, its cells by published column name, and the fault it reports. */
export interface Row {
  index: number;
  cell: (column: string) => string;
  fault: (column: string, code: string, message: string) => void;
}

/** The file's rows after its header (the first record naming `keyColumn`; the portal may print a preamble). */
export function rowsOf(
  records: readonly (readonly string[])[],
  columns: readonly string[],
  required: readonly string[],
  faults: StatementFault[],
): Row[] {
  const headerAt = records.findIndex((r) => r.some((c) => normalized(c) === normalized(required[0] ?? '')));
  const header = (records[headerAt] ?? []).map(normalized);
  const missing = required.filter((c) => !header.includes(normalized(c)));
  if (headerAt < 0 || missing.length > 0) {
    for (const column of headerAt < 0 ? required : missing) {
      faults.push({
        row: 0,
        param: `header.${column}`,
        code: 'missing',
        message: `the column ${column} is missing`,
      });
    }
    return [];
  }
  const at = new Map(columns.map((c) => [c, header.indexOf(normalized(c))]));
  return records.slice(headerAt + 1).flatMap((record, index) => {
    if (record.every((c) => c.trim() === '')) return [];
    return [
      {
        index,
        cell: (column: string) => (record[at.get(column) ?? -1] ?? '').trim(),
        fault: (column: string, code: string, message: string) =>
          faults.push({
            row: index + 1,
            param: `lines.${index}.${column}`,
            code,
            message: `row ${index + 1}, ${column}: ${message}`,
          }),
      },
    ];
  });
}

const THOUSANDS = /^\d{1,3}(,\d{3})+(\.\d+)?$/;

/** A partner's decimal amount (a sign and thousands separators allowed) in minor units, or undefined. */
export function amountOf(
  row: Row,
  column: string,
  currency: Currency,
): { minor: bigint; negative: boolean } | undefined {
  const text = row.cell(column);
  if (text === '') return { minor: 0n, negative: false };
  const negative = text.startsWith('-');
  const unsigned = negative ? text.slice(1).trim() : text;
  const plain = THOUSANDS.test(unsigned) ? unsigned.replaceAll(',', '') : unsigned;
  try {
    return { minor: parseAmount(plain, currency, column), negative };
  } catch (error) {
    const first = (error as { errors?: { code: string; message: string }[] }).errors?.[0];
    row.fault(column, first?.code ?? 'invalid_format', first?.message ?? `'${text}' is not an amount`);
    return undefined;
  }
}

const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/;
const ZONED_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The UTC day of a partner's local `YYYY-MM-DD HH:mm[:ss]` (or of a time that names its own offset); with
 * `dayAlone`, a bare `YYYY-MM-DD` too (a format that prints the day only, Flutterwave's settled charges).
 */
export function utcDayOf(
  row: Row,
  column: string,
  offsetMinutes: number,
  dayAlone = false,
): string | undefined {
  const text = row.cell(column);
  if (ZONED_TIME.test(text) && !Number.isNaN(Date.parse(text))) {
    return new Date(Date.parse(text)).toISOString().slice(0, 10);
  }
  if (dayAlone && DAY.test(text)) {
    const day = new Date(`${text}T00:00:00Z`);
    if (!Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === text) return text;
  }
  const m = LOCAL_TIME.exec(text);
  const [y, mo, d, h, mi, s] = (m?.slice(1) ?? []).map((part) => Number(part ?? 0));
  const local = m ? new Date(Date.UTC(y as number, (mo as number) - 1, d, h, mi, s)) : undefined;
  // A time that rolled over (2026-02-30, 24:10) is not the time written.
  const written = `${m?.[1]}-${m?.[2]}-${m?.[3]}T${m?.[4]}:${m?.[5]}:${m?.[6] ?? '00'}`;
  if (!local || local.toISOString().slice(0, 19) !== written) {
    row.fault(column, 'invalid_format', `'${text}' is not a time such as 2026-12-06 14:30:00`);
    return undefined;
  }
  return new Date(local.getTime() - offsetMinutes * 60_000).toISOString().slice(0, 10);
}

export function statusOf<S extends string>(
  row: Row,
  column: string,
  statuses: Record<string, S>,
): S | undefined {
  const status = statuses[row.cell(column).toLowerCase()];
  if (status === undefined) {
    row.fault(column, 'invalid_value', `'${row.cell(column)}' is not a status this format reports`);
  }
  return status;
}
