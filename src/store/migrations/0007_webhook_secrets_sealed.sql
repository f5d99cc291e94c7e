-- Webhook signing secrets are stored sealed (envelope encryption, src/domain/sealing.ts): each under its
-- own data key, wrapped by the master key named in key_id. SQL cannot encrypt, so rows written before this
-- migration keep their plaintext in legacy_plaintext_secret until the first start with a master key seals
-- them (sealLegacySecrets); a row holds exactly one of the two forms.

ALTER TABLE webhook_secrets DROP CONSTRAINT webhook_secrets_pkey;
ALTER TABLE webhook_secrets ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY;
ALTER TABLE webhook_secrets RENAME COLUMN secret TO legacy_plaintext_secret;
ALTER TABLE webhook_secrets ALTER COLUMN legacy_plaintext_secret DROP NOT NULL;
ALTER TABLE webhook_secrets ADD COLUMN key_id text;
ALTER TABLE webhook_secrets ADD COLUMN sealed_secret text;
ALTER TABLE webhook_secrets ADD CONSTRAINT webhook_secrets_one_form
  CHECK ((sealed_secret IS NULL) <> (legacy_plaintext_secret IS NULL) AND (sealed_secret IS NULL) = (key_id IS NULL));
CREATE INDEX webhook_secrets_subscription_idx ON webhook_secrets (subscription_id, created_at DESC);
CREATE INDEX webhook_secrets_key_idx ON webhook_secrets (key_id);
CREATE INDEX webhook_secrets_legacy_idx ON webhook_secrets (subscription_id) WHERE legacy_plaintext_secret IS NOT NULL;

-- Whether an organization may create webhook subscriptions. Organizations that exist now keep the ability
-- they had; new ones get it in the sandbox and not in production (set by the code that creates them), and
-- an operator switches it with `mkoba orgs set-webhooks`.
ALTER TABLE organizations ADD COLUMN webhook_subscriptions_enabled boolean NOT NULL DEFAULT true;
