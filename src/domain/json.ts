/**
 * Reading JSON from outside (partners' answers and callbacks, provider callbacks, what the simulators
 * receive): a text as a value or nothing, and the objects among values. Callers check the shape they expect.
 */

/** A text as JSON; undefined when it is empty or not JSON. */
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

/** A text that is a JSON object, or undefined (no text, not JSON, or JSON of another kind). */
export function jsonObjectOf(text: string | undefined): Record<string, unknown> | undefined {
  if (!text) return undefined;
  const value = parseJson(text);
  return isRecord(value) ? value : undefined;
}
