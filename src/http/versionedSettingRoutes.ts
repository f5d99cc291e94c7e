/**
 * The reads of a setting kept in numbered versions (the authorization policy, the fee schedule): the
 * current version, every version newest first (paged by version number), and one version by its number.
 * Each setting names its own operations; the query, the pages and the handlers are the same for all.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../app/deps.ts';
import type { Page } from '../domain/pagination.ts';
import { retrieveOwn } from './readRoutes.ts';
import {
  closedObjectSchema,
  cursorPageResponses,
  found,
  LIST_PROBLEMS,
  organizationOf,
  presentPage,
  readOperation,
  writeOperation,
} from './routeKit.ts';
import { pageLimitSchema } from './schemas.ts';

/** A setting kept in versions, as its routes read it. */
export interface VersionedSetting<Version extends { version: number }> {
  /** The path of the current version; the versions are at `{path}/versions`. */
  path: string;
  tags: string[];
  /** The `$id` of a version's schema. */
  schema: string;
  getCurrent: (deps: Deps, organizationId: string) => Promise<Version>;
  getVersion: (deps: Deps, organizationId: string, version: number) => Promise<Version>;
  listVersions: (
    deps: Deps,
    organizationId: string,
    request: { limit: number; beforeVersion?: number | undefined },
  ) => Promise<Page<Version>>;
  present: (version: Version) => unknown;
  /** The setting's name in operation ids (`FeeSchedule`) and in words (`fee schedule`). */
  name: { operation: string; words: string };
  /** What the current version is, and where a version's number is found. */
  descriptions: { current: string; version: string };
}

/**
 * The options of the write that replaces a versioned setting with its next version (PUT `setting.path`),
 * for admins: named after the setting (`update{Name}`, "Replace the {name}"), taking and answering what
 * `parts` say.
 */
export function replaceSettingOperation<Version extends { version: number }>(
  setting: VersionedSetting<Version>,
  parts: { description: string; body: object; responses: Record<number, object> },
) {
  return writeOperation({
    scope: 'admin',
    operationId: `update${setting.name.operation}`,
    summary: `Replace the ${setting.name.words}`,
    description: parts.description,
    tags: setting.tags,
    body: parts.body,
    responses: parts.responses,
  });
}

/** The three reads of a versioned setting: the current version, the versions, one version. */
export function versionedSettingReadRoutes<Version extends { version: number }>(
  app: FastifyInstance,
  deps: Deps,
  setting: VersionedSetting<Version>,
): void {
  const { operation, words } = setting.name;
  getCurrentVersionRoute(app, deps, setting, {
    operationId: `get${operation}`,
    summary: `Retrieve the current ${words}`,
    description: setting.descriptions.current,
  });
  listVersionsRoute(app, deps, setting, {
    operationId: `list${operation}Versions`,
    summary: `List ${words} versions`,
  });
  getVersionRoute(app, deps, setting, {
    operationId: `get${operation}Version`,
    summary: `Retrieve a ${words} version`,
    description: setting.descriptions.version,
    parameter: `The ${words} version.`,
  });
}

/** An operation's own words. */
interface Words {
  operationId: string;
  summary: string;
  description: string;
}

/** The current version: any key reads it, and an organization that never wrote one reads the first. */
function getCurrentVersionRoute<Version extends { version: number }>(
  app: FastifyInstance,
  deps: Deps,
  setting: VersionedSetting<Version>,
  words: Words,
): void {
  app.get(
    setting.path,
    readOperation({
      scope: 'read',
      ...words,
      tags: setting.tags,
      responses: { 200: found(setting.schema, 'The current version.') },
      problems: LIST_PROBLEMS,
    }),
    retrieveOwn(deps, setting.getCurrent, setting.present),
  );
}

const versionsQuerySchema = closedObjectSchema({
  limit: pageLimitSchema('versions'),
  before_version: {
    type: 'integer',
    minimum: 1,
    description: 'Only versions below this one (the `next_cursor` of the previous page).',
  },
});

/** Every version, newest first, a page at a time: each page's cursor is its last version's number. */
function listVersionsRoute<Version extends { version: number }>(
  app: FastifyInstance,
  deps: Deps,
  setting: VersionedSetting<Version>,
  words: Omit<Words, 'description'>,
): void {
  app.get<{ Querystring: { limit: number; before_version?: number } }>(
    `${setting.path}/versions`,
    readOperation({
      scope: 'read',
      ...words,
      description: 'Newest first; page with `before_version` (the last version of the previous page).',
      tags: setting.tags,
      querystring: versionsQuerySchema,
      responses: cursorPageResponses(
        setting.schema,
        { type: 'integer', param: 'before_version' },
        'A page of versions.',
      ),
      problems: LIST_PROBLEMS,
    }),
    async (request) => {
      const page = await setting.listVersions(deps, organizationOf(request), {
        limit: request.query.limit,
        beforeVersion: request.query.before_version,
      });
      return presentPage(page, setting.present, (version) => version.version);
    },
  );
}

/** One version by its number (the one a transfer or a decision names); a 404 when there is none. */
function getVersionRoute<Version extends { version: number }>(
  app: FastifyInstance,
  deps: Deps,
  setting: VersionedSetting<Version>,
  { parameter, ...words }: Words & { parameter: string },
): void {
  app.get<{ Params: { version: number } }>(
    `${setting.path}/versions/:version`,
    readOperation({
      scope: 'read',
      ...words,
      tags: setting.tags,
      params: {
        type: 'object',
        required: ['version'],
        properties: { version: { type: 'integer', minimum: 1, description: parameter } },
      },
      responses: { 200: found(setting.schema, 'That version.') },
    }),
    async (request) =>
      setting.present(await setting.getVersion(deps, organizationOf(request), request.params.version)),
  );
}
