-- AML transaction monitoring: rules as data per organization, and the alerts they open.

-- An organization's rules exist once this row does (the defaults are written with it, in one transaction).
CREATE TABLE aml_rule_sets (
  organization_id  text PRIMARY KEY REFERENCES organizations (id),
  created_at       timestamptz NOT NULL
);

CREATE TABLE aml_rules (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES aml_rule_sets (organization_id),
  name             text NOT NULL,
  type             text NOT NULL CHECK (type IN ('single_transfer_threshold', 'velocity', 'structuring',
                                                 'rapid_movement', 'new_counterparty_high_value')),
  currency         text NOT NULL,
  -- The type's parameters; money in minor units as strings.
  parameters       jsonb NOT NULL,
  action           text NOT NULL CHECK (action IN ('alert', 'review', 'block')),
  enabled          boolean NOT NULL,
  version          integer NOT NULL CHECK (version >= 1),
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL
);
CREATE INDEX aml_rules_organization_idx ON aml_rules (organization_id, id);

CREATE TABLE aml_alerts (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  rule_id          text NOT NULL REFERENCES aml_rules (id),
  rule_type        text NOT NULL,
  rule_version     integer NOT NULL,
  action           text NOT NULL CHECK (action IN ('alert', 'review')),
  transfer_id      text NOT NULL REFERENCES transfers (id),
  wallet_id        text NOT NULL REFERENCES wallets (id),
  customer_id      text NOT NULL REFERENCES customers (id),
  status           text NOT NULL CHECK (status IN ('open', 'resolved')),
  reason           text NOT NULL,
  observed         jsonb NOT NULL,
  disposition      text CHECK (disposition IN ('false_positive', 'escalated', 'reported')),
  note             text,
  resolved_by      text,
  created_at       timestamptz NOT NULL,
  resolved_at      timestamptz,
  CHECK ((status = 'open') = (resolved_at IS NULL)),
  CHECK ((status = 'open') = (disposition IS NULL))
);
CREATE INDEX aml_alerts_organization_idx ON aml_alerts (organization_id, id DESC);
CREATE INDEX aml_alerts_status_idx ON aml_alerts (organization_id, status, id DESC);
CREATE INDEX aml_alerts_wallet_idx ON aml_alerts (organization_id, wallet_id, id DESC);
CREATE INDEX aml_alerts_customer_idx ON aml_alerts (organization_id, customer_id, id DESC);
CREATE INDEX aml_alerts_transfer_idx ON aml_alerts (organization_id, transfer_id);
CREATE INDEX aml_alerts_rule_type_idx ON aml_alerts (organization_id, rule_type, id DESC);
-- One open alert per wallet and rule: a wallet that keeps tripping a rule adds evidence, not alerts, until
-- an operator resolves the one open.
CREATE UNIQUE INDEX aml_alerts_open_once_idx ON aml_alerts (wallet_id, rule_id) WHERE status = 'open';
