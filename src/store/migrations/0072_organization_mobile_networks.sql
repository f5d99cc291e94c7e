-- The mobile-money markets an organization pays in (`mpesa:KE`, `mtn:UG`): the rail-provider launch gate
-- holds them against what its partners carry. NULL: not named (any mobile-money partner passes the gate).
ALTER TABLE organization_profiles
  ADD COLUMN mobile_networks text[] CHECK (
    mobile_networks IS NULL OR array_position(mobile_networks, NULL) IS NULL);
