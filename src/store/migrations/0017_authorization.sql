-- Dynamic authorization: an organization's members (people, by email) with signer roles, keys that act for a
-- member, versioned policies whose every decision points at the version that made it, and approvals with
-- one vote per member. A transfer that needs approval waits `pending_approval` with its funds held.

CREATE TABLE members (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  email            text NOT NULL CHECK (email = lower(email) AND email LIKE '%_@_%'),
  name             text,
  roles            text[] NOT NULL CHECK (
    cardinality(roles) > 0
    AND roles <@ ARRAY['initiator', 'approver', 'admin', 'compliance', 'viewer']::text[]
  ),
  status           text NOT NULL CHECK (status IN ('active', 'removed')),
  created_by       text NOT NULL,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL
);
CREATE UNIQUE INDEX members_email_idx ON members (organization_id, email);
CREATE INDEX members_organization_idx ON members (organization_id, id DESC);

ALTER TABLE api_keys ADD COLUMN member_id text REFERENCES members (id);
CREATE INDEX api_keys_member_idx ON api_keys (member_id) WHERE member_id IS NOT NULL;

-- An organization's policy: ordered rules and a default, one row per version, never changed afterwards.
CREATE TABLE policy_versions (
  organization_id  text NOT NULL REFERENCES organizations (id),
  version          integer NOT NULL CHECK (version >= 1),
  rules            jsonb NOT NULL,
  default_rule     jsonb NOT NULL,
  created_by       text NOT NULL,
  -- The approval that let this version in, when changes need one.
  approval_id      text,
  created_at       timestamptz NOT NULL,
  PRIMARY KEY (organization_id, version)
);

CREATE FUNCTION mkoba_policy_versions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'policy versions are append-only (% refused)', TG_OP USING ERRCODE = 'check_violation';
END;
$$;
CREATE TRIGGER policy_versions_append_only BEFORE UPDATE OR DELETE ON policy_versions
  FOR EACH ROW EXECUTE FUNCTION mkoba_policy_versions_append_only();
CREATE TRIGGER policy_versions_no_truncate BEFORE TRUNCATE ON policy_versions
  FOR EACH STATEMENT EXECUTE FUNCTION mkoba_policy_versions_append_only();

-- A proposed policy change waiting for its approval.
CREATE TABLE policy_changes (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  status           text NOT NULL CHECK (status IN ('pending_approval', 'applied', 'rejected', 'expired', 'superseded')),
  base_version     integer NOT NULL,
  applied_version  integer,
  rules            jsonb NOT NULL,
  default_rule     jsonb NOT NULL,
  created_by       text NOT NULL,
  created_at       timestamptz NOT NULL,
  decided_at       timestamptz,
  CHECK ((status = 'applied') = (applied_version IS NOT NULL))
);
CREATE INDEX policy_changes_organization_idx ON policy_changes (organization_id, id DESC);

CREATE TABLE approvals (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  resource_type    text NOT NULL CHECK (resource_type IN ('transfer', 'policy_change')),
  resource_id      text NOT NULL,
  status           text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'canceled')),
  policy_version   integer NOT NULL,
  rule             text NOT NULL,
  quorum           integer NOT NULL CHECK (quorum >= 1),
  roles            text[] NOT NULL CHECK (cardinality(roles) > 0),
  distinct_roles   boolean NOT NULL,
  -- Who asked: a member id, or the API key id when the key acts for no member.
  initiated_by     text NOT NULL,
  expires_at       timestamptz NOT NULL,
  created_at       timestamptz NOT NULL,
  decided_at       timestamptz,
  CHECK ((status = 'pending') = (decided_at IS NULL))
);
CREATE INDEX approvals_organization_idx ON approvals (organization_id, id DESC);
CREATE INDEX approvals_status_idx ON approvals (organization_id, status, id DESC);
CREATE INDEX approvals_resource_idx ON approvals (organization_id, resource_id);
-- One live approval per resource.
CREATE UNIQUE INDEX approvals_pending_resource_idx ON approvals (resource_id) WHERE status = 'pending';
-- The expiry worker's queue.
CREATE INDEX approvals_expiry_idx ON approvals (expires_at) WHERE status = 'pending';

CREATE TABLE approval_votes (
  approval_id      text NOT NULL REFERENCES approvals (id),
  member_id        text NOT NULL REFERENCES members (id),
  role             text NOT NULL,
  decision         text NOT NULL CHECK (decision IN ('approve', 'reject')),
  comment          text,
  -- The API key the member voted with.
  api_key_id       text NOT NULL,
  created_at       timestamptz NOT NULL,
  -- A member counts once.
  PRIMARY KEY (approval_id, member_id)
);

CREATE FUNCTION mkoba_approval_votes_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'approval votes are append-only (% refused)', TG_OP USING ERRCODE = 'check_violation';
END;
$$;
CREATE TRIGGER approval_votes_append_only BEFORE UPDATE OR DELETE ON approval_votes
  FOR EACH ROW EXECUTE FUNCTION mkoba_approval_votes_append_only();

-- Who created a transfer (a member, or the key), the policy decision on it, and its approval.
ALTER TABLE transfers ADD COLUMN created_by text;
ALTER TABLE transfers ADD COLUMN authorization_decision jsonb;
ALTER TABLE transfers ADD COLUMN approval_id text;

-- A held transfer whose review clears and whose policy asked for approval waits for the approval next.
INSERT INTO transfer_status_transitions (from_status, to_status) VALUES ('in_review', 'pending_approval');
