-- Webhook subscriptions, their signing secrets, and the delivery queue fed by the event outbox.

CREATE TABLE webhook_subscriptions (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  url              text NOT NULL,
  events           text[] NOT NULL,
  description      text,
  payload_format   text NOT NULL CHECK (payload_format IN ('snake_case', 'camel_case')),
  status           text NOT NULL CHECK (status IN ('enabled', 'disabled')),
  disabled_reason  text,
  -- Set at the first failure after a success; cleared by a success. Auto-disable measures from here.
  failing_since    timestamptz,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  deleted_at       timestamptz
);
CREATE INDEX webhook_subscriptions_organization_idx ON webhook_subscriptions (organization_id, id DESC)
  WHERE deleted_at IS NULL;

-- Secrets sign deliveries, so they are kept in clear; a rotated-out secret signs until expires_at.
CREATE TABLE webhook_secrets (
  subscription_id  text NOT NULL REFERENCES webhook_subscriptions (id),
  secret           text NOT NULL,
  created_at       timestamptz NOT NULL,
  expires_at       timestamptz,
  PRIMARY KEY (subscription_id, secret)
);

-- One row per (event, subscription). status: pending (due at next_attempt_at), delivering (leased by a
-- dispatcher until lease_expires_at), succeeded, or exhausted (the retry schedule ran out).
CREATE TABLE webhook_deliveries (
  id                text PRIMARY KEY,
  organization_id   text NOT NULL REFERENCES organizations (id),
  event_id          text NOT NULL REFERENCES events (id),
  subscription_id   text NOT NULL REFERENCES webhook_subscriptions (id),
  status            text NOT NULL CHECK (status IN ('pending', 'delivering', 'succeeded', 'exhausted')),
  attempts          integer NOT NULL DEFAULT 0,
  next_attempt_at   timestamptz NOT NULL,
  lease_expires_at  timestamptz,
  last_attempt_at   timestamptz,
  last_status_code  integer,
  last_error        text,
  succeeded_at      timestamptz,
  created_at        timestamptz NOT NULL,
  UNIQUE (event_id, subscription_id)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at)
  WHERE status IN ('pending', 'delivering');
CREATE INDEX webhook_deliveries_subscription_idx ON webhook_deliveries (subscription_id, status);
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);

-- Every attempt, kept for the delivery log.
CREATE TABLE webhook_attempts (
  delivery_id    text NOT NULL REFERENCES webhook_deliveries (id),
  attempt        integer NOT NULL,
  started_at     timestamptz NOT NULL,
  duration_ms    integer NOT NULL,
  status_code    integer,
  error_class    text,
  response_body  text,
  PRIMARY KEY (delivery_id, attempt)
);
