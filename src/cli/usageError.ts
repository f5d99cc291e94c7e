/** A command line the CLI cannot act on: `mkoba` prints the message and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
