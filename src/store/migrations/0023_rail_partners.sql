-- Rail partners: an organization's configuration of a partner (M-Pesa Daraja, MTN MoMo) on a rail and
-- network, its credentials sealed with the master keyring, and the unguessable token in its callback path.
-- Callbacks are stored as they arrived before they are acknowledged, then applied once.

CREATE TABLE rail_partner_configs (
  id                  text PRIMARY KEY,
  organization_id     text NOT NULL REFERENCES organizations (id),
  rail                text NOT NULL,
  network             text,
  partner             text NOT NULL CHECK (partner IN ('mpesa_daraja', 'mtn_momo')),
  status              text NOT NULL CHECK (status IN ('active', 'disabled')),
  settings            jsonb NOT NULL,
  credential_names    jsonb NOT NULL,
  sealed_credentials  text NOT NULL,
  credentials_key_id  text NOT NULL,
  callback_token      text NOT NULL UNIQUE,
  created_at          timestamptz NOT NULL,
  updated_at          timestamptz NOT NULL
);
-- One active partner per organization, rail and network.
CREATE UNIQUE INDEX rail_partner_configs_active_idx ON rail_partner_configs
  (organization_id, rail, coalesce(network, '')) WHERE status = 'active';
CREATE INDEX rail_partner_configs_organization_idx ON rail_partner_configs (organization_id, id DESC);
CREATE INDEX rail_partner_configs_key_idx ON rail_partner_configs (credentials_key_id);

CREATE TABLE rail_callbacks (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  config_id        text NOT NULL REFERENCES rail_partner_configs (id),
  partner          text NOT NULL,
  path             text NOT NULL,
  headers          jsonb NOT NULL,
  raw_body         text NOT NULL,
  body_sha256      text NOT NULL,
  -- received: stored, not yet applied; applied: changed a transfer or collection; duplicate: the same bytes
  -- came before; unchanged: agreed with what was already recorded; ignored: says nothing to apply;
  -- malformed: not the partner's shape; exception: sent to the reconciliation exception queue.
  status           text NOT NULL CHECK (status IN ('received', 'applied', 'duplicate', 'unchanged', 'ignored',
                                                   'malformed', 'exception')),
  transfer_id      text REFERENCES transfers (id),
  detail           text,
  received_at      timestamptz NOT NULL,
  -- While received: when to try applying it again (a payout not yet known may be recorded meanwhile).
  next_attempt_at  timestamptz,
  processed_at     timestamptz
);
-- The same bytes on the same path are one callback: a repeat is recorded as a duplicate of the first.
CREATE UNIQUE INDEX rail_callbacks_first_idx ON rail_callbacks (config_id, path, body_sha256)
  WHERE status <> 'duplicate';
CREATE INDEX rail_callbacks_organization_idx ON rail_callbacks (organization_id, id DESC);
CREATE INDEX rail_callbacks_unprocessed_idx ON rail_callbacks (next_attempt_at) WHERE status = 'received';
CREATE INDEX rail_callbacks_transfer_idx ON rail_callbacks (transfer_id) WHERE transfer_id IS NOT NULL;
