/**
 * The API version: the date of the newest entry in CHANGELOG.md. It names the OpenAPI document and is
 * carried by every event, so a receiver can tell which model an event was written against.
 */
export const API_VERSION = '2026-11-22';
