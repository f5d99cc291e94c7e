/**
 * `mkoba sanctions import FILE` and `mkoba sanctions list`. The import shows a progress bar on a terminal
 * (plain progress lines otherwise) and a summary; the new version's id is the one line on stdout.
 */

import path from 'node:path';
import type { AdminCommand, AdminProgress, AdminResult } from '../app/admin.ts';
import type { SanctionsImportProgress } from '../modules/compliance/index.ts';
import { terminalProgressBar } from './progressBar.ts';
import { UsageError } from './usageError.ts';

type Io = { out: (line: string) => void; err: (line: string) => void };
type RunAdmin = (
  command: AdminCommand,
  onProgress?: (progress: AdminProgress) => void,
) => Promise<AdminResult>;

/** Without a terminal, a progress line at most this often. */
export const SANCTIONS_IMPORT_PROGRESS_LINE_INTERVAL_MS = 2_000;

interface ProgressView {
  update(progress: SanctionsImportProgress): void;
  stop(): void;
}

/** A bar on a terminal; undefined without one. */
async function progressBar(fileName: string): Promise<ProgressView | undefined> {
  const bar = await terminalProgressBar({
    format: `importing ${fileName} [{bar}] {percentage}% | {entries} entries | {eta_formatted} left`,
    hideCursor: true,
    clearOnComplete: true,
  });
  if (!bar) return undefined;
  let started = false;
  return {
    update(progress) {
      if (!started) bar.start(Math.max(progress.bytesTotal, 1), 0, { entries: 0 });
      started = true;
      bar.update(progress.bytesRead, { entries: progress.entries });
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}

function progressLines(fileName: string, io: Io): ProgressView {
  let lastAtMs = Date.now();
  return {
    update(progress) {
      const nowMs = Date.now();
      if (nowMs - lastAtMs < SANCTIONS_IMPORT_PROGRESS_LINE_INTERVAL_MS) return;
      lastAtMs = nowMs;
      const percent =
        progress.bytesTotal > 0 ? Math.floor((100 * progress.bytesRead) / progress.bytesTotal) : 100;
      io.err(`importing ${fileName}: ${percent}% of the file, ${progress.entries} entries`);
    },
    stop: () => {},
  };
}

async function importList(file: string | undefined, io: Io, runAdmin: RunAdmin): Promise<number> {
  if (!file)
    throw new UsageError(
      'sanctions import needs a FILE (a CSV: id,name,aliases,type,country,date_of_birth,program)',
    );
  // A server holding the embedded database reads the file itself, from its own working directory.
  const absolute = path.resolve(file);
  const fileName = path.basename(absolute);
  const view = (await progressBar(fileName)) ?? progressLines(fileName, io);
  let result: AdminResult;
  try {
    result = await runAdmin({ name: 'sanctions.import', path: absolute }, (progress) => {
      if ('bytesRead' in progress) view.update(progress);
    });
  } finally {
    view.stop();
  }
  if (result.name !== 'sanctions.import') return 1;
  const s = result.summary;
  io.err(`imported ${s.sourceFileName} as sanctions list version ${s.versionId}, now active`);
  io.err(
    `  entries ${s.entries} (persons ${s.persons}, entities ${s.entities}), aliases ${s.aliases}, in ${(s.durationMs / 1000).toFixed(2)} s`,
  );
  io.err(`  sha256 ${s.sha256}${s.retiredVersionId ? `; retired ${s.retiredVersionId}` : ''}`);
  io.out(s.versionId);
  return 0;
}

async function listVersions(io: Io, runAdmin: RunAdmin): Promise<number> {
  const result = await runAdmin({ name: 'sanctions.list' });
  if (result.name !== 'sanctions.list') return 1;
  if (result.versions.length === 0) io.err('no sanctions list imported yet: mkoba sanctions import FILE');
  for (const v of result.versions) {
    io.out(
      [
        v.status === 'active' ? '*' : ' ',
        v.id,
        v.status,
        `${v.entries} entries`,
        v.sourceFileName,
        `created ${v.createdAt}`,
        v.activatedAt ? `activated ${v.activatedAt}` : '',
        v.retiredAt ? `retired ${v.retiredAt}` : '',
      ]
        .filter(Boolean)
        .join('\t'),
    );
  }
  return 0;
}

export async function sanctionsCommand(
  sub: string | undefined,
  rest: readonly string[],
  io: Io,
  runAdmin: RunAdmin,
): Promise<number> {
  if (sub === 'import') return importList(rest[0], io, runAdmin);
  if (sub === 'list') return listVersions(io, runAdmin);
  throw new UsageError(`unknown sanctions command '${sub ?? ''}': use import or list`);
}
