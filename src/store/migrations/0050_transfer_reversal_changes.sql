-- A reversal of a settled payout is a governed change too: it brings money back into a wallet at one
-- operator's word, so the policy can make it wait for another member's approval.
ALTER TABLE governed_changes DROP CONSTRAINT governed_changes_kind_check;
ALTER TABLE governed_changes ADD CONSTRAINT governed_changes_kind_check CHECK (kind IN (
  'role_grant', 'api_key', 'policy', 'conversion_rate', 'fee_schedule', 'aml_rule',
  'digital_asset_route', 'rail_partner', 'trust_account', 'launch_gate_override', 'transfer_reversal'
));
