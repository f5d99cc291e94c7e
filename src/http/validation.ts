/**
 * Two Ajv instances: request bodies are validated strictly (no type coercion, unknown fields rejected,
 * every error reported, a `oneOf` with a discriminator checked against the form its tag names); query
 * strings, path parameters and headers arrive as text and are coerced.
 */
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const shared: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false };
// `discriminator`: a body that is one of several forms told apart by a field is checked against that form
// alone, so its faults are named as in any object (a plain `oneOf` reports every form that failed).
const bodyAjv = addFormats(new Ajv({ ...shared, coerceTypes: false, discriminator: true }));
const textAjv = addFormats(new Ajv({ ...shared, coerceTypes: 'array' }));

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);
