-- Payout requests sent to a rail partner whose API takes no idempotency key (M-Pesa B2B). A row is written
-- before the request goes out, so a submit repeated after a time-out, a 5xx or a crash finds it and never
-- sends a second request (which would be a second payment); the partner's id for the request is added once
-- it acknowledged it, for the status query that asks about the payout by that id.
CREATE TABLE rail_payout_requests (
  transfer_id         text PRIMARY KEY REFERENCES transfers (id),
  organization_id     text NOT NULL REFERENCES organizations (id),
  config_id           text NOT NULL REFERENCES rail_partner_configs (id),
  sent_at             timestamptz NOT NULL,
  -- The partner's id for the request (Daraja's OriginatorConversationID), once acknowledged.
  partner_request_id  text,
  acknowledged_at     timestamptz
);
