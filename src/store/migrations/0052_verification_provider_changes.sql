-- A change of the verification provider (Smile ID's configuration) is a governed change too: the kinds a
-- stored change may name, widened to it.
ALTER TABLE governed_changes DROP CONSTRAINT governed_changes_kind_check;
ALTER TABLE governed_changes ADD CONSTRAINT governed_changes_kind_check CHECK (kind IN (
  'role_grant', 'api_key', 'policy', 'conversion_rate', 'fee_schedule', 'aml_rule',
  'digital_asset_route', 'rail_partner', 'verification_provider', 'trust_account', 'launch_gate_override',
  'transfer_reversal'
));
