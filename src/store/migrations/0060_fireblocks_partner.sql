-- Fireblocks as a partner: the custody provider whose vault accounts carry an organization's digital-asset
-- payouts (rail digital_asset, every network), configured, sealed and called back like the others.

ALTER TABLE rail_partner_configs DROP CONSTRAINT rail_partner_configs_partner_check;
ALTER TABLE rail_partner_configs ADD CONSTRAINT rail_partner_configs_partner_check
  CHECK (partner IN ('mpesa_daraja', 'mtn_momo', 'flutterwave', 'fireblocks'));
