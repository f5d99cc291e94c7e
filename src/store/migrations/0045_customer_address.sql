-- A customer's postal address, set on creation or with PATCH /v1/customers/{id}; null until given.
ALTER TABLE customers ADD COLUMN IF NOT EXISTS address jsonb;
