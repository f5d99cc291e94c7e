-- Sanctions lists: platform-wide (not per organization). Each import is a new version: loaded while
-- 'loading', then made 'active' and the previous one 'retired' in one transaction. The database keeps
-- exactly one version active, and a version's entries fixed once it has left 'loading', so a screening
-- that read a version's entries read all of them and they never change under it.

CREATE TABLE sanctions_list_versions (
  id                text PRIMARY KEY,
  source_file_name  text NOT NULL,
  sha256            text CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  entry_count       integer NOT NULL DEFAULT 0 CHECK (entry_count >= 0),
  alias_count       integer NOT NULL DEFAULT 0 CHECK (alias_count >= 0),
  person_count      integer NOT NULL DEFAULT 0 CHECK (person_count >= 0),
  entity_count      integer NOT NULL DEFAULT 0 CHECK (entity_count >= 0),
  status            text NOT NULL CHECK (status IN ('loading', 'active', 'retired')),
  created_at        timestamptz NOT NULL,
  activated_at      timestamptz,
  retired_at        timestamptz,
  CHECK ((status = 'loading') = (activated_at IS NULL)),
  CHECK ((status = 'retired') = (retired_at IS NOT NULL)),
  CHECK (status = 'loading' OR (sha256 IS NOT NULL AND entry_count > 0
                                AND person_count + entity_count = entry_count))
);
-- Exactly one active version: a second activation before the first is retired is refused. It also serves
-- the screening's look-up of the active version.
CREATE UNIQUE INDEX sanctions_list_versions_one_active ON sanctions_list_versions ((true))
  WHERE status = 'active';
-- The import's clean-up of abandoned loads.
CREATE INDEX sanctions_list_versions_loading_idx ON sanctions_list_versions (created_at)
  WHERE status = 'loading';

-- loading -> active -> retired, never back; a version's file, hash and counts never change once active.
CREATE FUNCTION mkoba_check_sanctions_version_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status = 'loading' AND NEW.status IN ('loading', 'active') THEN
    RETURN NEW;
  END IF;
  IF OLD.status = 'active' AND NEW.status = 'retired'
     AND (NEW.source_file_name, NEW.sha256, NEW.entry_count, NEW.alias_count, NEW.person_count,
          NEW.entity_count, NEW.created_at, NEW.activated_at)
         IS NOT DISTINCT FROM
         (OLD.source_file_name, OLD.sha256, OLD.entry_count, OLD.alias_count, OLD.person_count,
          OLD.entity_count, OLD.created_at, OLD.activated_at) THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'sanctions list version %: change from % to % refused', OLD.id, OLD.status, NEW.status
    USING ERRCODE = 'check_violation';
END $$;
CREATE TRIGGER sanctions_list_versions_lifecycle BEFORE UPDATE ON sanctions_list_versions
  FOR EACH ROW EXECUTE FUNCTION mkoba_check_sanctions_version_change();

-- Only a version still loading (a failed or abandoned import) may be deleted.
CREATE FUNCTION mkoba_refuse_loaded_sanctions_version_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status <> 'loading' THEN
    RAISE EXCEPTION 'sanctions list version % is %: delete refused', OLD.id, OLD.status
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN OLD;
END $$;
CREATE TRIGGER sanctions_list_versions_keep_loaded BEFORE DELETE ON sanctions_list_versions
  FOR EACH ROW EXECUTE FUNCTION mkoba_refuse_loaded_sanctions_version_delete();

CREATE TABLE sanctions_list_entries (
  version_id          text NOT NULL REFERENCES sanctions_list_versions (id),
  -- The list's own id of the entry.
  entry_id            text NOT NULL,
  name                text NOT NULL,
  aliases             text[] NOT NULL DEFAULT '{}',
  type                text NOT NULL CHECK (type IN ('person', 'entity')),
  country             text CHECK (country ~ '^[A-Z]{2}$'),
  date_of_birth       text CHECK (date_of_birth ~ '^[0-9]{4}(-[0-9]{2}-[0-9]{2})?$'),
  program             text,
  -- The matching forms (src/domain/screening/normalize.ts): words folded and sorted, honorifics dropped.
  name_normalized     text NOT NULL CHECK (name_normalized <> ''),
  aliases_normalized  text[] NOT NULL DEFAULT '{}',
  CHECK (cardinality(aliases_normalized) = cardinality(aliases)),
  -- Also the index through which a version's entries are read, in entry id order.
  PRIMARY KEY (version_id, entry_id)
);

-- Entries are written only into a version still loading, never changed, and deleted only with it.
CREATE FUNCTION mkoba_check_sanctions_entries_loading() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    RAISE EXCEPTION 'sanctions list entries are never changed' USING ERRCODE = 'check_violation';
  END IF;
  -- Waits for an activation in flight, so an entry never slips into a version as it goes live.
  PERFORM 1 FROM sanctions_list_versions v
    WHERE v.id IN (SELECT version_id FROM changed_entries) FOR SHARE;
  IF EXISTS (
    SELECT 1 FROM sanctions_list_versions v
     WHERE v.status <> 'loading'
       AND v.id IN (SELECT version_id FROM changed_entries)
  ) THEN
    RAISE EXCEPTION 'sanctions list entries may change only while their version is loading (%)', TG_OP
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER sanctions_list_entries_insert_while_loading AFTER INSERT ON sanctions_list_entries
  REFERENCING NEW TABLE AS changed_entries
  FOR EACH STATEMENT EXECUTE FUNCTION mkoba_check_sanctions_entries_loading();
CREATE TRIGGER sanctions_list_entries_delete_while_loading AFTER DELETE ON sanctions_list_entries
  REFERENCING OLD TABLE AS changed_entries
  FOR EACH STATEMENT EXECUTE FUNCTION mkoba_check_sanctions_entries_loading();
CREATE TRIGGER sanctions_list_entries_never_updated BEFORE UPDATE ON sanctions_list_entries
  FOR EACH STATEMENT EXECUTE FUNCTION mkoba_check_sanctions_entries_loading();
