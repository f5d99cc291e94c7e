/**
 * The API version: the date of the newest entry in CHANGELOG.md. It names the OpenAPI document; events
 * carry the payload version they are rendered in (src/domain/payloadVersions.ts), the newest by default.
 */
export const API_VERSION = '2026-12-06';
