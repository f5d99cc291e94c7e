/**
 * `mkoba export TYPE --format csv|jsonl [--from ISO] [--to ISO] --organization NAME [--out FILE]`: runs an
 * export now (through the running server when it owns the embedded database), with a progress bar, and
 * copies the file to --out; the file's path is the one line on stdout.
 */

import { copyFile } from 'node:fs/promises';
import type { AdminCommand, AdminProgress, AdminResult } from '../app/admin.ts';
import {
  EXPORT_FORMATS,
  EXPORT_TYPES,
  type ExportFormat,
  type ExportType,
} from '../modules/exports/index.ts';
import { terminalProgressBar } from './progressBar.ts';
import { UsageError } from './usageError.ts';

type Io = { out: (line: string) => void; err: (line: string) => void };
type RunAdmin = (
  command: AdminCommand,
  onProgress?: (progress: AdminProgress) => void,
) => Promise<AdminResult>;

export async function exportCommand(
  type: string | undefined,
  options: {
    format?: string | undefined;
    from?: string | undefined;
    to?: string | undefined;
    out?: string | undefined;
    organization: string;
  },
  io: Io,
  runAdmin: RunAdmin,
): Promise<number> {
  if (!type || !(EXPORT_TYPES as readonly string[]).includes(type)) {
    throw new UsageError(`export needs a TYPE: ${EXPORT_TYPES.join(', ')}`);
  }
  const format = options.format ?? 'csv';
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--format takes ${EXPORT_FORMATS.join(' or ')}`);
  }
  const bar = await terminalProgressBar({
    format: `exporting ${type} [{bar}] {percentage}% | {value}/{total} rows`,
  });
  let started = false;
  let result: AdminResult;
  try {
    result = await runAdmin(
      {
        name: 'exports.run',
        organization: options.organization,
        type: type as ExportType,
        format: format as ExportFormat,
        from: options.from,
        to: options.to,
      },
      (progress) => {
        if (!('rowsWritten' in progress) || !bar) return;
        if (!started) bar.start(Math.max(progress.rowsEstimated, 1), 0);
        started = true;
        bar.setTotal(Math.max(progress.rowsEstimated, 1));
        bar.update(progress.rowsWritten);
      },
    );
  } finally {
    if (started) bar?.stop();
  }
  if (result.name !== 'exports.run') return 1;
  const { export: done } = result;
  const destination = options.out ?? done.file;
  if (options.out) await copyFile(done.file, options.out);
  io.err(`${done.id}: ${done.rows} ${type} rows, ${done.bytes ?? 0} bytes, sha256 ${done.sha256 ?? ''}`);
  io.out(destination);
  return 0;
}
