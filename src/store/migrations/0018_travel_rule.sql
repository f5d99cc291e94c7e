-- The Travel Rule and approved digital-asset routes: routes (an asset on a network) and Travel Rule
-- settings as data per organization, and each transfer's link to the evidence record holding its
-- Travel Rule data.

-- An asset on a network that an organization allows (or has turned off). A transfer to a route that is
-- not here, or not enabled, is refused. The defaults are written on the organization's first use.
CREATE TABLE digital_asset_routes (
  organization_id  text NOT NULL REFERENCES organizations (id),
  asset            text NOT NULL CHECK (asset IN ('USDC', 'USDT')),
  network          text NOT NULL CHECK (network ~ '^[a-z][a-z0-9_]{1,31}$'),
  status           text NOT NULL CHECK (status IN ('enabled', 'disabled')),
  updated_at       timestamptz NOT NULL,
  PRIMARY KEY (organization_id, asset, network)
);

-- Thresholds in USD per jurisdiction (`default` and ISO 3166-1 alpha-2 countries, decimal strings) and
-- the rates table (currency to USD, decimal strings), as the API shows them.
CREATE TABLE travel_rule_settings (
  organization_id  text PRIMARY KEY REFERENCES organizations (id),
  thresholds       jsonb NOT NULL CHECK (jsonb_typeof(thresholds) = 'object' AND thresholds ? 'default'),
  rates            jsonb NOT NULL CHECK (jsonb_typeof(rates) = 'object'),
  updated_at       timestamptz NOT NULL
);

-- The evidence record with the transfer's Travel Rule data, and whether the threshold required it. The
-- data itself lives only in the evidence chain.
ALTER TABLE transfers ADD COLUMN travel_rule_evidence_id text;
ALTER TABLE transfers ADD COLUMN travel_rule_required boolean;
ALTER TABLE transfers ADD CONSTRAINT transfers_travel_rule_check
  CHECK ((travel_rule_evidence_id IS NULL) = (travel_rule_required IS NULL));
