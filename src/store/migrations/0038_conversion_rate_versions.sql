-- Conversion rates have versions: every change of a pair's rate is a new, append-only version naming the
-- rate it replaced and who set it. The table of rates in force names the version of each; a quote and the
-- conversion that executes it name the version they were given at.
CREATE TABLE conversion_rate_versions (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  from_currency    text NOT NULL,
  to_currency      text NOT NULL,
  rate             text NOT NULL CHECK (rate ~ '^[0-9]{1,9}(\.[0-9]{1,12})?$'),
  previous_rate    text CHECK (previous_rate IS NULL OR previous_rate ~ '^[0-9]{1,9}(\.[0-9]{1,12})?$'),
  -- Why it applied: within the band of the previous rate, the sandbox's first rate of a pair, its defaults,
  -- or approved by a second member.
  basis            text NOT NULL CHECK (basis IN ('within_band', 'sandbox_first_rate', 'defaults', 'approved')),
  set_by           text,
  created_at       timestamptz NOT NULL,
  CHECK (from_currency <> to_currency)
);
CREATE INDEX conversion_rate_versions_pair_idx
  ON conversion_rate_versions (organization_id, from_currency, to_currency, created_at DESC);
CREATE TRIGGER conversion_rate_versions_append_only BEFORE UPDATE OR DELETE ON conversion_rate_versions
  FOR EACH ROW EXECUTE FUNCTION mkoba_refuse_change();

-- Rates set before versions existed have none (null).
ALTER TABLE conversion_rates ADD COLUMN version_id text REFERENCES conversion_rate_versions (id);
ALTER TABLE conversion_quotes ADD COLUMN rate_version_id text REFERENCES conversion_rate_versions (id);
ALTER TABLE conversions ADD COLUMN rate_version_id text REFERENCES conversion_rate_versions (id);
