/**
 * Reading JSON from outside (partners' answers and callbacks, provider callbacks, what the simulators
 * receive, the request bodies domain rules parse): a text as a value or nothing, the objects among values,
 * an object's fields refused when they are not the ones expected, and a value refused outside its allowed
 * set or range. Callers check the shape they expect.
 */
import { validationError } from './errors.ts';

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

/** `raw` when it is an object (not null, not an array); else 400 `invalid_type` on `param`. */
export function requireObject(raw: unknown, param: string): Record<string, unknown> {
  if (!isRecord(raw)) throw validationError(param, `${param} must be an object`, 'invalid_type');
  return raw;
}

/** A text that is a JSON object, or undefined (no text, not JSON, or JSON of another kind). */
export function jsonObjectOf(text: string | undefined): Record<string, unknown> | undefined {
  if (!text) return undefined;
  const value = parseJson(text);
  return isRecord(value) ? value : undefined;
}

/** 400 `unknown_field` for the first field of `raw` (the object at `param`) that is not among `known`. */
export function refuseUnknownFields(
  raw: Record<string, unknown>,
  known: readonly string[],
  param: string,
): void {
  for (const key of Object.keys(raw)) {
    if (!known.includes(key)) {
      throw validationError(`${param}.${key}`, `${param}.${key} is not a field of ${param}`, 'unknown_field');
    }
  }
}

/** `value` when it is one of `allowed`; else 400 `invalid_value` on `param`, naming every allowed value. */
export function requireOneOf<const T extends string>(
  value: unknown,
  allowed: readonly T[],
  param: string,
): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw validationError(param, `${param} must be one of: ${allowed.join(', ')}`, 'invalid_value');
  }
  return value as T;
}

/** `raw` when it is a whole number from `min` to `max`; else 400 `out_of_range` on `param`. */
export function requireWholeNumber(raw: unknown, param: string, min: number, max: number): number {
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < min || raw > max) {
    throw validationError(param, `${param} must be a whole number from ${min} to ${max}`, 'out_of_range');
  }
  return raw;
}
