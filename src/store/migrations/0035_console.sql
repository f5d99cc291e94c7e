-- The operator console: members sign in with a password (an Argon2id hash, never the password) or a
-- one-time link the CLI prints; each sign-in is a session whose token is kept only as a SHA-256 digest.
-- Plus the indexes the console's searches need.

-- A member's console password, set by the member once signed in.
CREATE TABLE member_passwords (
  member_id      text PRIMARY KEY REFERENCES members (id),
  password_hash  text NOT NULL CHECK (password_hash LIKE '$argon2id$%'),
  updated_at     timestamptz NOT NULL
);

-- A one-time sign-in link: used at most once, before it expires.
CREATE TABLE console_sign_in_links (
  id               text PRIMARY KEY,
  token_hash       text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  organization_id  text NOT NULL REFERENCES organizations (id),
  member_id        text NOT NULL REFERENCES members (id),
  created_at       timestamptz NOT NULL,
  expires_at       timestamptz NOT NULL CHECK (expires_at > created_at),
  used_at          timestamptz,
  CHECK (used_at IS NULL OR used_at >= created_at)
);
CREATE INDEX console_sign_in_links_member_idx ON console_sign_in_links (member_id);

-- A signed-in member. It ends at sign-out, at idle expiry (last_seen_at too old), at its absolute
-- lifetime, or when the member is removed; an ended session is never live again.
CREATE TABLE console_sessions (
  id               text PRIMARY KEY,
  token_hash       text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  organization_id  text NOT NULL REFERENCES organizations (id),
  member_id        text NOT NULL REFERENCES members (id),
  method           text NOT NULL CHECK (method IN ('password', 'link')),
  created_at       timestamptz NOT NULL,
  last_seen_at     timestamptz NOT NULL CHECK (last_seen_at >= created_at),
  ended_at         timestamptz,
  end_reason       text CHECK (end_reason IN ('signed_out', 'idle', 'lifetime', 'member_removed')),
  CHECK ((ended_at IS NULL) = (end_reason IS NULL))
);
CREATE INDEX console_sessions_member_idx ON console_sessions (member_id) WHERE ended_at IS NULL;

-- Transfer search: by rail reference and by destination phone, per organization, newest first.
CREATE INDEX transfers_rail_reference_search_idx ON transfers (organization_id, rail_reference, id DESC)
  WHERE rail_reference IS NOT NULL;
CREATE INDEX transfers_destination_phone_idx ON transfers (organization_id, (destination ->> 'phone'), id DESC)
  WHERE destination ? 'phone';
-- A subscription's delivery log, newest first.
CREATE INDEX webhook_deliveries_subscription_log_idx ON webhook_deliveries (subscription_id, id DESC);
