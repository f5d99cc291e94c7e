/** Reading partners' JSON: their answers and callbacks as values, and the objects among them. */

/** A text as JSON; undefined when it is empty or not JSON (the adapter checks what it expected). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Whether a JSON value is an object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
