-- Flutterwave as a rail partner: bank payouts and bank deposits into virtual account numbers (rail bank),
-- configured, sealed and called back like the others. The list already names 'fireblocks' (0060 adds it
-- too), so that the two agree.

ALTER TABLE rail_partner_configs DROP CONSTRAINT rail_partner_configs_partner_check;
ALTER TABLE rail_partner_configs ADD CONSTRAINT rail_partner_configs_partner_check
  CHECK (partner IN ('mpesa_daraja', 'mtn_momo', 'fireblocks', 'flutterwave'));
