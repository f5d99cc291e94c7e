-- Governed changes: a sensitive setting (a role grant, an elevated key, the policy, a conversion rate, a fee
-- schedule, an AML rule, a digital-asset route, a rail partner, a trust account, a launch-gate override)
-- proposed by one member and waiting for the approval the organization's policy asks for. Applied in the
-- transaction of the vote that approves it; its payload is the request as proposed (secrets sealed).
CREATE TABLE governed_changes (
  id                text PRIMARY KEY,
  organization_id   text NOT NULL REFERENCES organizations (id),
  kind              text NOT NULL CHECK (kind IN (
    'role_grant', 'api_key', 'policy', 'conversion_rate', 'fee_schedule', 'aml_rule',
    'digital_asset_route', 'rail_partner', 'trust_account', 'launch_gate_override'
  )),
  action            text NOT NULL,
  target_id         text,
  payload           jsonb NOT NULL,
  status            text NOT NULL CHECK (status IN ('pending', 'applied', 'failed', 'rejected', 'expired', 'canceled')),
  proposed_by       text NOT NULL,
  proposed_by_key   text,
  approval_id       text,
  policy_version    integer NOT NULL,
  rule              text NOT NULL,
  failure           jsonb,
  created_at        timestamptz NOT NULL,
  decided_at        timestamptz,
  applied_at        timestamptz
);

CREATE INDEX governed_changes_organization_idx ON governed_changes (organization_id, id DESC);
CREATE INDEX governed_changes_pending_idx ON governed_changes (organization_id, kind) WHERE status = 'pending';

-- A governed change waits for an approval, as a transfer or a loan does. Widened the same way.
DO $$
DECLARE
  current_check text;
BEGIN
  SELECT pg_get_constraintdef(c.oid) INTO current_check
    FROM pg_constraint c
   WHERE c.conrelid = 'approvals'::regclass AND c.conname = 'approvals_resource_type_check';
  ALTER TABLE approvals DROP CONSTRAINT approvals_resource_type_check;
  EXECUTE format(
    'ALTER TABLE approvals ADD CONSTRAINT approvals_resource_type_check CHECK ((%s) OR resource_type = %L)',
    substring(current_check FROM '^CHECK \((.*)\)$'),
    'change'
  );
END;
$$;
