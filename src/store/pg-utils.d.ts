/** node-postgres's own parameter conversion (untyped in @types/pg): what it sends as a parameter's text. */
declare module 'pg/lib/utils.js' {
  const utils: { prepareValue(value: unknown): string | Buffer | null };
  export default utils;
}
