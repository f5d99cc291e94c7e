-- Every HTTP request Mkoba sends to a rail partner (M-Pesa Daraja, MTN MoMo, Flutterwave, Fireblocks), one
-- row each, written as `sent` before the request leaves and completed with the answer: when, which partner
-- configuration, which operation, which transfer, wallet, sweep or collection it was for, our idempotency
-- key or reference, the partner's reference, the HTTP status or the failure, and how long it took. A row left
-- `sent` is a request whose answer was never recorded (the process died, or the database refused the
-- update). Never a body, a header, a token, a key, a signature, a phone number or a name: only the fields
-- listed here (docs/DECISIONS.md, "Rail partners").
CREATE TABLE IF NOT EXISTS rail_partner_calls (
  id                 text PRIMARY KEY,
  organization_id    text NOT NULL REFERENCES organizations (id),
  rail_partner_id    text NOT NULL REFERENCES rail_partner_configs (id),
  partner            text NOT NULL,
  operation          text NOT NULL,
  method             text NOT NULL,
  -- The path under the configured base URL, without its query; digits that could be a phone or account
  -- number are masked.
  path               text NOT NULL,
  transfer_id        text,
  wallet_id          text,
  sweep_id           text,
  collection_id      text,
  our_reference      text,
  partner_reference  text,
  status             text NOT NULL CHECK (status IN ('sent', 'answered', 'timeout', 'failed')),
  http_status        integer,
  -- The partner's short result or error code (`0`, `SUCCESSFUL`, `RESOURCE_NOT_FOUND`, …), never its text.
  partner_code       text,
  -- Why a request got no answer: `timeout`, `no_connection`, `blocked_address`.
  failure            text,
  duration_ms        integer,
  created_at         timestamptz NOT NULL,
  answered_at        timestamptz
);
