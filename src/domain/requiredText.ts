/** A required text field as use cases take it: trimmed, then 1 to a maximum number of characters. */
import { validationError } from './errors.ts';

/** The value trimmed; 400 `validation_error` (with `code`) naming `param` when empty or over `max` characters. */
export function requiredText(
  value: string,
  param: string,
  max: number,
  code: 'out_of_range' | 'invalid_length',
): string {
  const text = value.trim();
  if (text.length === 0 || text.length > max) {
    throw validationError(param, `${param} must be 1 to ${max} characters`, code);
  }
  return text;
}
