-- Going live: the pilot environment's keys and volume caps, the organization's profile (its legal entity,
-- the products it launches) and named contacts, the launch gates as the sandbox records them, and the
-- operators' overrides where keys are issued.

ALTER TABLE api_keys DROP CONSTRAINT api_keys_environment_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_environment_check
  CHECK (environment IN ('sandbox', 'pilot', 'production'));

CREATE TABLE organization_profiles (
  organization_id  text PRIMARY KEY REFERENCES organizations (id),
  -- The business customer whose KYB stands for the organization itself.
  legal_entity_id  text REFERENCES customers (id),
  products         text[] NOT NULL CHECK (
                     cardinality(products) >= 1
                     AND products <@ ARRAY['mobile_money', 'digital_banking', 'stablecoins']::text[]),
  updated_at       timestamptz NOT NULL
);

CREATE TABLE organization_contacts (
  organization_id  text NOT NULL REFERENCES organizations (id),
  role             text NOT NULL CHECK (role IN ('technical', 'compliance', 'finance')),
  name             text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  email            text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  phone            text CHECK (phone ~ '^\+[1-9][0-9]{6,14}$'),
  updated_at       timestamptz NOT NULL,
  PRIMARY KEY (organization_id, role)
);

-- One row per organization, product and gate, as the deployment that evaluates them (the sandbox) last
-- decided it. Evaluations lock the organization's rows, so two of them never announce one change twice.
CREATE TABLE launch_gates (
  organization_id     text NOT NULL REFERENCES organizations (id),
  product             text NOT NULL CHECK (product IN ('mobile_money', 'digital_banking', 'stablecoins')),
  gate                text NOT NULL CHECK (gate IN ('business_verified', 'contacts_named', 'policies_configured',
                                                    'webhook_endpoint_verified', 'sandbox_scenario_completed',
                                                    'reconciliation_run')),
  state               text NOT NULL CHECK (state IN ('open', 'passed')),
  evidence            jsonb NOT NULL,
  -- The evidence chain's record of the last change of state (none while a gate has never changed).
  evidence_record_id  text REFERENCES evidence_records (id),
  updated_at          timestamptz NOT NULL,
  checked_at          timestamptz NOT NULL,
  PRIMARY KEY (organization_id, product, gate)
);

-- The sandbox scenario's rarer outcomes, found without reading an organization's every transfer: these
-- rows are few beside the settled ones.
CREATE INDEX transfers_failed_idx ON transfers (organization_id, rail) WHERE status = 'failed';
CREATE INDEX transfers_returned_idx ON transfers (organization_id, rail) WHERE status = 'returned';
CREATE INDEX transfers_rail_timeout_idx ON transfers (organization_id, rail) WHERE status_reason = 'rail_timeout';

-- An operator's decision to issue keys past an open gate, in the deployment that issues them; once per gate.
CREATE TABLE launch_gate_overrides (
  organization_id     text NOT NULL REFERENCES organizations (id),
  product             text NOT NULL CHECK (product IN ('mobile_money', 'digital_banking', 'stablecoins')),
  gate                text NOT NULL,
  reason              text NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
  evidence_record_id  text NOT NULL REFERENCES evidence_records (id),
  created_at          timestamptz NOT NULL,
  PRIMARY KEY (organization_id, product, gate)
);
CREATE TRIGGER launch_gate_overrides_append_only BEFORE UPDATE OR DELETE ON launch_gate_overrides
  FOR EACH ROW EXECUTE FUNCTION mkoba_refuse_change();

-- Pilot caps: what each organization created per currency and UTC day. The ledger writer locks a batch's
-- rows with one statement after the accounts and writes them back with one; a transfer that moved no money
-- gives its count and amount back.
CREATE TABLE pilot_cap_usage (
  organization_id  text NOT NULL REFERENCES organizations (id),
  currency         text NOT NULL,
  day              date NOT NULL,
  transfer_count   bigint NOT NULL CHECK (transfer_count >= 0),
  sent_minor       bigint NOT NULL CHECK (sent_minor >= 0),
  PRIMARY KEY (organization_id, currency, day)
);
