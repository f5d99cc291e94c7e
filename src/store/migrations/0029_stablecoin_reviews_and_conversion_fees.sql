-- Deposits whose required Travel Rule data is missing are held for a compliance operator's review instead of
-- being credited; conversions pay fees from the fee schedule and are watched by the AML rules (their alerts
-- name the quote whose execution fired them).

-- What the originator's data came to, when the amount required it or it was given: received or not. Read
-- back from the evidence record each deposit already names.
ALTER TABLE deposits ADD COLUMN travel_rule_received boolean;
UPDATE deposits d
   SET travel_rule_received = ((e.payload::jsonb -> 'data' ->> 'received') = 'true')
  FROM evidence_records e
 WHERE e.id = d.travel_rule_evidence_id;
ALTER TABLE deposits ADD COLUMN held_at timestamptz;
ALTER TABLE deposits ADD COLUMN rejected_at timestamptz;

-- held_for_review: confirmed, its required Travel Rule data missing, waiting for an operator; rejected: the
-- operator refused it, never credited and owed back to the sender.
ALTER TABLE deposits DROP CONSTRAINT deposits_status_check;
ALTER TABLE deposits ADD CONSTRAINT deposits_status_check
  CHECK (status IN ('pending', 'held_for_review', 'credited', 'rejected', 'reorged'));
ALTER TABLE deposits ADD CONSTRAINT deposits_held_check CHECK (
  status NOT IN ('held_for_review', 'rejected')
  OR (confirmations >= required_confirmations AND travel_rule_required IS TRUE AND held_at IS NOT NULL)
);
ALTER TABLE deposits ADD CONSTRAINT deposits_rejected_check CHECK ((status = 'rejected') = (rejected_at IS NOT NULL));

-- A deposit's status only moves forward: pending → held_for_review, credited or reorged; held_for_review →
-- credited or rejected; never back, never between finals.
CREATE OR REPLACE FUNCTION mkoba_check_deposit_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status <> NEW.status AND NOT (
       (OLD.status = 'pending' AND NEW.status IN ('held_for_review', 'credited', 'reorged'))
    OR (OLD.status = 'held_for_review' AND NEW.status IN ('credited', 'rejected'))
  ) THEN
    RAISE EXCEPTION 'deposit % is %: it cannot become %', OLD.id, OLD.status, NEW.status;
  END IF;
  IF OLD.status <> 'pending' AND (OLD.amount_minor <> NEW.amount_minor OR OLD.wallet_id <> NEW.wallet_id) THEN
    RAISE EXCEPTION 'deposit % is final', OLD.id;
  END IF;
  RETURN NEW;
END;
$$;

-- A held deposit is a review case of its own kind. The kind check is widened from what it allows now, so
-- kinds added by migrations merged beside this one are kept.
DO $$
DECLARE
  current_check text;
BEGIN
  SELECT pg_get_constraintdef(c.oid) INTO current_check
    FROM pg_constraint c
   WHERE c.conrelid = 'review_cases'::regclass AND c.conname = 'review_cases_kind_check';
  ALTER TABLE review_cases DROP CONSTRAINT review_cases_kind_check;
  EXECUTE format(
    'ALTER TABLE review_cases ADD CONSTRAINT review_cases_kind_check CHECK ((%s) OR kind = %L)',
    substring(current_check FROM '^CHECK \((.*)\)$'),
    'travel_rule'
  );
END;
$$;
ALTER TABLE review_cases ADD COLUMN deposit_id text REFERENCES deposits (id);
-- A deposit is held once, so it has one case at most.
CREATE UNIQUE INDEX review_cases_deposit_idx ON review_cases (deposit_id) WHERE deposit_id IS NOT NULL;

-- A conversion's fee, like a transfer's: charged only by a rule of a stored version, fixed on the quote and
-- carried to the conversion.
ALTER TABLE conversion_quotes
  ADD COLUMN fee_schedule_version integer,
  ADD COLUMN fee_rule text,
  ADD CONSTRAINT conversion_quotes_fee_schedule_fkey FOREIGN KEY (organization_id, fee_schedule_version)
    REFERENCES fee_schedule_versions (organization_id, version),
  ADD CONSTRAINT conversion_quotes_fee_rule_check CHECK (fee_rule IS NULL OR fee_schedule_version IS NOT NULL),
  ADD CONSTRAINT conversion_quotes_fee_decided_check CHECK (fee_minor = 0 OR fee_rule IS NOT NULL);
ALTER TABLE conversions
  ADD COLUMN fee_schedule_version integer,
  ADD COLUMN fee_rule text,
  ADD CONSTRAINT conversions_fee_schedule_fkey FOREIGN KEY (organization_id, fee_schedule_version)
    REFERENCES fee_schedule_versions (organization_id, version),
  ADD CONSTRAINT conversions_fee_rule_check CHECK (fee_rule IS NULL OR fee_schedule_version IS NOT NULL),
  ADD CONSTRAINT conversions_fee_decided_check CHECK (fee_minor = 0 OR fee_rule IS NOT NULL);

-- The AML rules read a wallet's conversions as its activity (a mint pays out of the fiat wallet and into the
-- stablecoin wallet), over a window.
CREATE INDEX conversions_from_wallet_idx ON conversions (organization_id, from_wallet_id, created_at DESC);
CREATE INDEX conversions_to_wallet_idx ON conversions (organization_id, to_wallet_id, created_at DESC);

-- An alert fired by a conversion names the quote that was executed (refused or not, the quote exists).
ALTER TABLE aml_alerts ALTER COLUMN transfer_id DROP NOT NULL;
ALTER TABLE aml_alerts ADD COLUMN conversion_quote_id text REFERENCES conversion_quotes (id);
ALTER TABLE aml_alerts ADD CONSTRAINT aml_alerts_subject_check CHECK (num_nonnulls(transfer_id, conversion_quote_id) = 1);
