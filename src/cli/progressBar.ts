/**
 * A progress bar on stderr for the commands that show one on a terminal. cli-progress is imported when a
 * bar is made: compiled (bin/compiledSources.js), a static import would load it in every process.
 */
import type { Options, SingleBar } from 'cli-progress';

/** A bar on stderr when it is a terminal; undefined otherwise (the command prints lines instead). */
export async function terminalProgressBar(options: Options): Promise<SingleBar | undefined> {
  if (!process.stderr.isTTY) return undefined;
  const { SingleBar } = await import('cli-progress');
  return new SingleBar({ stream: process.stderr, ...options });
}
