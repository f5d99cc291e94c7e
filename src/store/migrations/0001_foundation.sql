-- Organizations, API keys, customers, wallets, idempotency records and one-time seeds.

CREATE TABLE organizations (
  id          text PRIMARY KEY,
  name        text NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  environment      text NOT NULL CHECK (environment IN ('sandbox', 'production')),
  key_hash         text NOT NULL UNIQUE,
  display_prefix   text NOT NULL,
  scopes           text[] NOT NULL,
  created_at       timestamptz NOT NULL,
  revoked_at       timestamptz
);
CREATE INDEX api_keys_organization_idx ON api_keys (organization_id, id);

CREATE TABLE customers (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  type             text NOT NULL CHECK (type IN ('individual', 'business')),
  name             text NOT NULL,
  email            text,
  phone            text,
  kyc_status       text NOT NULL CHECK (kyc_status IN ('unverified', 'pending', 'verified', 'rejected')),
  metadata         jsonb NOT NULL DEFAULT '{}',
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL
);
CREATE INDEX customers_organization_idx ON customers (organization_id, id DESC);

CREATE TABLE wallets (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  owner_id         text NOT NULL REFERENCES customers (id),
  currency         text NOT NULL,
  status           text NOT NULL CHECK (status IN ('active', 'frozen', 'closed')),
  available_minor  bigint NOT NULL DEFAULT 0,
  pending_minor    bigint NOT NULL DEFAULT 0,
  current_minor    bigint NOT NULL DEFAULT 0,
  metadata         jsonb NOT NULL DEFAULT '{}',
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  CHECK (pending_minor >= 0),
  CHECK (available_minor = current_minor - pending_minor)
);
CREATE INDEX wallets_organization_idx ON wallets (organization_id, id DESC);
CREATE INDEX wallets_owner_idx ON wallets (organization_id, owner_id, id DESC);

-- One row per (organization, Idempotency-Key), written in the same transaction as the effect.
CREATE TABLE idempotency_records (
  organization_id  text NOT NULL REFERENCES organizations (id),
  idempotency_key  text NOT NULL,
  fingerprint      text NOT NULL,
  method           text NOT NULL,
  path             text NOT NULL,
  response_status  integer NOT NULL,
  response_body    jsonb NOT NULL,
  created_at       timestamptz NOT NULL,
  PRIMARY KEY (organization_id, idempotency_key)
);
CREATE INDEX idempotency_records_created_idx ON idempotency_records (created_at);

CREATE TABLE seeds (
  name        text PRIMARY KEY,
  applied_at  timestamptz NOT NULL
);
