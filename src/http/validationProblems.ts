/**
 * Schema validation failures in our words: Ajv's issues become field errors (a `param`, a code and a
 * sentence naming the field), each reported once, for the `validation_error` problem.
 */
import { PHONE_PATTERN } from '../domain/contactDetails.ts';
import { type AppError, type FieldError, validationErrors } from '../domain/errors.ts';
import { IDEMPOTENCY_KEY_LENGTH_MAX, IDEMPOTENCY_KEY_PATTERN } from '../domain/idempotency.ts';

export interface AjvIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  /** Set by Ajv on an error inside `propertyNames`: the key that failed. */
  propertyName?: string;
}

const AJV_KEYWORD_CODES: Record<string, string> = {
  required: 'missing',
  additionalProperties: 'unknown_field',
  type: 'invalid_type',
  enum: 'invalid_value',
  const: 'invalid_value',
  pattern: 'invalid_format',
  format: 'invalid_format',
  minLength: 'too_short',
  maxLength: 'too_long',
  minimum: 'out_of_range',
  maximum: 'out_of_range',
  exclusiveMinimum: 'out_of_range',
  exclusiveMaximum: 'out_of_range',
  multipleOf: 'invalid_value',
  maxProperties: 'too_many',
  minProperties: 'too_few',
  maxItems: 'too_many',
  minItems: 'too_few',
  uniqueItems: 'invalid_value',
  propertyNames: 'invalid_key',
};

/** The canonical spelling of header names used as a `param`. */
const HEADER_PARAMS: Record<string, string> = {
  'idempotency-key': 'Idempotency-Key',
  'consistency-token': 'Consistency-Token',
};

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

/** Patterns that mean something to a reader, in words; any other pattern is quoted. */
const PATTERN_WORDING = new Map<string, string>([
  [
    IDEMPOTENCY_KEY_PATTERN,
    `must be 1 to ${IDEMPOTENCY_KEY_LENGTH_MAX} printable ASCII characters, without spaces`,
  ],
  [PHONE_PATTERN, 'must be in international format, e.g. +254712345678'],
  ['^\\S+$', 'must not contain spaces'],
]);

const FORMAT_WORDING: Record<string, string> = {
  'date-time': 'must be an RFC 3339 date-time, e.g. 2025-01-31T09:30:00Z',
  email: 'must be an email address',
  uri: 'must be a URL',
};

/** `^wallet_[…]{26}$` or `^(?:wallet|acct)_[…]{26}$`: an id pattern from idPattern(), its prefixes and length. */
const ID_PATTERN = /^\^(?:\(\?:)?([a-z|]+)\)?_\[0-9a-hjkmnp-tv-z\]\{(\d+)\}\$$/;

function listInWords(items: string[], conjunction: string): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} ${conjunction} ${items[items.length - 1]}`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function patternWording(pattern: string): string {
  const known = PATTERN_WORDING.get(pattern);
  if (known !== undefined) return known;
  const id = ID_PATTERN.exec(pattern);
  if (id?.[1] !== undefined) {
    const forms = id[1].split('|').map((prefix) => `${prefix}_<${id[2]} characters>`);
    return `must be an id of the form ${listInWords(forms, 'or')}`;
  }
  return `must match the pattern ${pattern}`;
}

/** What a failed keyword means, in our words: the predicate after the field's name. */
function ajvWording(issue: AjvIssue, isBody: boolean): string {
  const p = issue.params;
  const limit = Number(p.limit);
  switch (issue.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'type': {
      const types = Array.isArray(p.type) ? (p.type as string[]) : String(p.type).split(',');
      return `must be ${listInWords(
        types.map((t) => TYPE_NAMES[t] ?? t),
        'or',
      )}`;
    }
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'pattern':
      return patternWording(String(p.pattern));
    case 'format':
      return FORMAT_WORDING[String(p.format)] ?? `must be a valid ${String(p.format)}`;
    case 'minLength':
      return limit === 1 ? 'must not be empty' : `must be at least ${plural(limit, 'character')}`;
    case 'maxLength':
      return `must be at most ${plural(limit, 'character')}`;
    case 'minimum':
      return `must be at least ${limit}`;
    case 'maximum':
      return `must be at most ${limit}`;
    case 'exclusiveMinimum':
      return `must be greater than ${limit}`;
    case 'exclusiveMaximum':
      return `must be less than ${limit}`;
    case 'multipleOf':
      return `must be a multiple of ${String(p.multipleOf)}`;
    case 'minProperties':
      return `must have at least ${plural(limit, isBody ? 'field' : 'key')}`;
    case 'maxProperties':
      return `may have at most ${plural(limit, isBody ? 'field' : 'key')}`;
    case 'minItems':
      return `must have at least ${plural(limit, 'item')}`;
    case 'maxItems':
      return `may have at most ${plural(limit, 'item')}`;
    case 'uniqueItems':
      return `must not repeat an item (items ${String(p.j)} and ${String(p.i)} are the same)`;
    case 'propertyNames':
      return 'is not an allowed key';
    case 'anyOf':
    case 'oneOf':
      return 'does not match any of the allowed forms';
    default:
      return 'is invalid';
  }
}

function fieldErrorFromAjv(issue: AjvIssue, context: string): FieldError {
  const segments = issue.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (issue.keyword === 'type' && segments.length === 0 && context === 'body') {
    return { param: 'body', code: 'invalid_type', message: 'The request body must be a JSON object.' };
  }
  const isBody = segments.length === 0 && context === 'body';
  let code = AJV_KEYWORD_CODES[issue.keyword] ?? 'invalid';
  let predicate = ajvWording(issue, isBody);
  const container = segments.join('.');
  if (issue.keyword === 'required') segments.push(String(issue.params.missingProperty));
  if (issue.keyword === 'additionalProperties') segments.push(String(issue.params.additionalProperty));
  if (issue.keyword === 'propertyNames') segments.push(String(issue.params.propertyName));
  if (issue.propertyName !== undefined) {
    // A rule on the keys of an object (metadata): the key is at fault, not the object.
    segments.push(issue.propertyName);
    code = 'invalid_key';
    predicate = `key ${JSON.stringify(issue.propertyName)} ${predicate}`;
  }
  let param = segments.join('.');
  if (context === 'headers') param = HEADER_PARAMS[param] ?? param;
  const subject = param === '' ? (context === 'body' ? 'body' : context) : param;
  const named = issue.propertyName !== undefined ? container || 'body' : subject;
  return { param: subject, code, message: `${named} ${predicate}` };
}

/**
 * Ajv reports a key that breaks `propertyNames` twice: the rule it broke, then "property name must be
 * valid". The first says why; the second is dropped.
 */
function withoutRepeatedKeyIssues(issues: AjvIssue[]): AjvIssue[] {
  // One pass to index the keys reported, one to drop: a body may bring tens of thousands of issues.
  const reportedKeys = new Set(
    issues.flatMap((issue) =>
      issue.propertyName === undefined ? [] : [JSON.stringify([issue.instancePath, issue.propertyName])],
    ),
  );
  return issues.filter(
    (issue) =>
      issue.keyword !== 'propertyNames' ||
      !reportedKeys.has(JSON.stringify([issue.instancePath, String(issue.params.propertyName)])),
  );
}

/** Each field error once, in order: linear, since a body may bring tens of thousands of them. */
function withoutRepeatedFieldErrors(errors: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((error) => {
    const key = JSON.stringify([error.param, error.code]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * A `oneOf` told apart by a discriminator reports a missing or unknown tag twice: the tag's own rule
 * (`required`, `enum`), which names the field, then the discriminator's. The first says why; the second is
 * dropped.
 */
function withoutRepeatedTagIssues(issues: AjvIssue[]): AjvIssue[] {
  return issues.filter((issue) => {
    if (issue.keyword !== 'discriminator') return true;
    const tag = String(issue.params.tag);
    return !issues.some(
      (other) =>
        (other.instancePath === `${issue.instancePath}/${tag}` && other.keyword !== 'discriminator') ||
        (other.instancePath === issue.instancePath &&
          other.keyword === 'required' &&
          other.params.missingProperty === tag),
    );
  });
}

/** The `validation_error` problem of a request's failed schema, from Ajv's issues in its `context`. */
export function validationProblem(issues: AjvIssue[], context: string): AppError {
  // A field unknown both to the body and to the form its discriminator picked is named once.
  const errors = withoutRepeatedFieldErrors(
    withoutRepeatedTagIssues(withoutRepeatedKeyIssues(issues)).map((issue) =>
      fieldErrorFromAjv(issue, context),
    ),
  );
  return validationErrors(errors);
}
