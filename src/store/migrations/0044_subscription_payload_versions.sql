-- Each subscription is pinned to the payload version its events are rendered in (src/domain/payloadVersions.ts).
-- Subscriptions made before versions were recorded keep the shape they were receiving: 2026-11-28.
ALTER TABLE webhook_subscriptions ADD COLUMN IF NOT EXISTS api_version text NOT NULL DEFAULT '2026-11-28';
