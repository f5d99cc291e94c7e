/** An export job as the API shows it. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  idSchema,
  nullableStringSchema,
  nullableTimestampSchema,
  timestampSchema,
} from '../../../http/schemas.ts';
import { EXPORT_FORMATS, EXPORT_STATUSES, EXPORT_TYPES } from '../domain.ts';

export const exportSchema = apiObjectSchema(
  'Export',
  'export',
  'An export job: `queued` → `running` (with progress) → `ready` (download it; `export.ready` is emitted) or `failed`; a ready file is kept 7 days, then `expired`.',
  {
    id: idSchema(ID_PREFIXES.export, 'Export id.'),
    type: { type: 'string', enum: EXPORT_TYPES },
    format: { type: 'string', enum: EXPORT_FORMATS },
    from: nullableTimestampSchema,
    to: nullableTimestampSchema,
    status: { type: 'string', enum: EXPORT_STATUSES },
    rows_written: { type: 'integer', description: 'Records written so far (the file’s, once ready).' },
    rows_estimated: {
      type: ['integer', 'null'],
      description: 'Records the range held when the export began.',
    },
    bytes: { type: ['integer', 'null'] },
    sha256: nullableStringSchema('SHA-256 of the file, in hex: check the download against it.'),
    error: { type: ['string', 'null'] },
    created_by: { type: 'string' },
    created_at: timestampSchema,
    started_at: nullableTimestampSchema,
    finished_at: nullableTimestampSchema,
    expires_at: nullableTimestampSchema,
  },
);
