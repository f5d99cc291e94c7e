-- A wallet's bank account number issued by a rail partner (Flutterwave's static virtual account numbers): one
-- per wallet and partner, made with the wallet's virtual account reference as the partner's `tx_ref`, so a
-- deposit's webhook names the wallet. The holder's BVN is sent to the partner and never stored.
CREATE TABLE wallet_partner_accounts (
  wallet_id        text NOT NULL REFERENCES wallets (id),
  organization_id  text NOT NULL REFERENCES organizations (id),
  partner          text NOT NULL,
  config_id        text NOT NULL,
  tx_ref           text NOT NULL,
  account_number   text NOT NULL,
  bank_name        text NOT NULL,
  order_ref        text NOT NULL,
  flw_ref          text,
  created_at       timestamptz NOT NULL,
  PRIMARY KEY (wallet_id, partner),
  UNIQUE (organization_id, partner, account_number)
);
