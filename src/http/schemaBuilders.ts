/**
 * Builders of the JSON schemas that the API's objects and bodies repeat: an object whose fields are all
 * required (each named once, not again in `required`), open or closed, and a non-empty choice from a fixed
 * list.
 */

/** An API object's fields: its `object` field first (unless `properties` already hold one), then these. */
function objectFields<const Kind extends string, const Properties extends Record<string, unknown>>(
  object: Kind,
  properties: Properties,
) {
  return { object: { type: 'string', enum: [object] } as const, ...properties };
}

/** A described, shared schema (`$id`) of an API object with these fields, all of them required, in order. */
function describedObjectSchema<const Fields extends Record<string, unknown>>(
  $id: string,
  description: string,
  fields: Fields,
) {
  return {
    $id,
    type: 'object',
    description,
    required: Object.keys(fields) as (keyof Fields & string)[],
    properties: fields,
  } as const;
}

/**
 * The schema of an object the API answers with, a shared component named by `$id`: its `object` field
 * says what kind it is, and every field is always present (null where it has no value), so all are
 * `required`, in the order given. Properties that already hold an `object` field keep it first.
 */
export function apiObjectSchema<const Kind extends string, const Properties extends Record<string, unknown>>(
  $id: string,
  object: Kind,
  description: string,
  properties: Properties,
) {
  return describedObjectSchema($id, description, objectFields(object, properties));
}

/**
 * The schema of an API object as `apiObjectSchema` builds it, for the API's first objects (wallets, the
 * ledger's accounts and entries, events), which name their `id` before their `object` field.
 */
export function idFirstApiObjectSchema<
  const Kind extends string,
  const Id,
  const Properties extends Record<string, unknown>,
>($id: string, object: Kind, description: string, properties: { id: Id } & Properties) {
  const { id, ...rest } = properties;
  return describedObjectSchema($id, description, { id, ...objectFields(object, rest) });
}

/**
 * The schema of an API object as `apiObjectSchema` builds it, but closed (no fields besides these) and
 * without words of its own: the savings module's objects and the sandbox's test clock.
 */
export function closedApiObjectSchema<
  const Kind extends string,
  const Properties extends Record<string, unknown>,
>($id: string, object: Kind, properties: Properties) {
  const fields = objectFields(object, properties);
  return {
    $id,
    type: 'object',
    additionalProperties: false,
    required: Object.keys(fields) as (keyof typeof fields & string)[],
    properties: fields,
  } as const;
}

/** A choice of some of `values`: at least one, and no more entries than there are values. */
export function someOfSchema<const Value extends string>(values: readonly Value[], description?: string) {
  return {
    type: 'array',
    minItems: 1,
    maxItems: values.length,
    items: { type: 'string', enum: values },
    ...(description === undefined ? {} : { description }),
  } as const;
}

/**
 * The body of a change (a PATCH): a closed object whose fields are all optional, at least one of them
 * given; a field left out keeps its value.
 */
export function changeBodySchema<const Properties extends Record<string, unknown>>(properties: Properties) {
  return { type: 'object', additionalProperties: false, minProperties: 1, properties } as const;
}
