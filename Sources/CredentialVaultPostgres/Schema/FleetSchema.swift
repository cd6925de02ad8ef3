/// The store's tables and statements (docs/FLEET.md describes them). Every statement names
/// the schema explicitly (a validated identifier, never user text inside a literal) and takes
/// its values as binary parameters.
struct FleetSchema: Sendable {
    /// The schema version this code reads and writes. A store of another version is refused
    /// (`unsupported`): it is never migrated silently.
    static let version: Int64 = 1

    let name: String

    /// The channel NOTIFY wakes readers on (a hint: the generation is what is trusted).
    var channel: String { "credvault_\(name)" }

    /// Creates the schema, tables and triggers (in the caller's transaction). Fails when the
    /// schema exists already (SQLSTATE 42P06, or 23505 when another transaction created it
    /// concurrently): `init` never touches an existing store.
    ///
    /// `fleet_meta_forward` keeps the meta row from going back: the store's role needs `UPDATE`
    /// on it (the row lock, the seal, the generation trigger), and without the guard it could
    /// put a row back (the trigger counts it) and then set the generation back to the sealed
    /// one: a consumed or revoked credential back, unnoticed. Only the tables' owner (who can
    /// switch the guard off) or a superuser can do that now.
    var creation: String {
        """
        CREATE SCHEMA \(name);
        CREATE TABLE \(name).fleet_meta (
            singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
            schema_version bigint NOT NULL,
            store_id bytea NOT NULL CHECK (length(store_id) = 16),
            key_epoch bigint NOT NULL,
            generation bigint NOT NULL,
            state_seal bytea,
            key_chain bytea);
        CREATE TABLE \(name).fleet_hosts (
            host text PRIMARY KEY,
            key_source bigint NOT NULL,
            salt bytea NOT NULL,
            ops_limit bigint NOT NULL,
            mem_limit bigint NOT NULL,
            key_epoch bigint NOT NULL,
            wrapped_key bytea NOT NULL);
        CREATE TABLE \(name).fleet_records (
            name_hash bytea PRIMARY KEY CHECK (length(name_hash) = 32),
            version bigint NOT NULL,
            key_epoch bigint NOT NULL,
            expires_at bigint,
            sealed bytea NOT NULL);
        CREATE INDEX fleet_records_expiry ON \(name).fleet_records (expires_at) WHERE expires_at IS NOT NULL;
        CREATE FUNCTION \(name).fleet_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE \(name).fleet_meta SET generation = generation + 1;
            PERFORM pg_notify('\(channel)', '');
            RETURN NULL;
        END $$;
        CREATE TRIGGER fleet_records_changed AFTER INSERT OR UPDATE OR DELETE ON \(name).fleet_records
            FOR EACH ROW EXECUTE FUNCTION \(name).fleet_changed();
        CREATE FUNCTION \(name).fleet_meta_forward() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.generation < OLD.generation OR NEW.key_epoch < OLD.key_epoch THEN
                RAISE EXCEPTION 'the fleet store''s fleet_meta only moves forward' USING ERRCODE = 'check_violation';
            END IF;
            RETURN NEW;
        END $$;
        CREATE TRIGGER fleet_meta_forward BEFORE UPDATE ON \(name).fleet_meta
            FOR EACH ROW EXECUTE FUNCTION \(name).fleet_meta_forward();
        """
    }

    var insertMeta: String {
        "INSERT INTO \(name).fleet_meta (schema_version, store_id, key_epoch, generation, state_seal) VALUES ($1, $2, $3, 0, $4)"
    }
    /// Adds the state seal and the key chain to a store made before them (its owner's role; the
    /// first write seals it, the first rotation starts the chain).
    var addStateSeal: String {
        "ALTER TABLE \(name).fleet_meta ADD COLUMN IF NOT EXISTS state_seal bytea, ADD COLUMN IF NOT EXISTS key_chain bytea"
    }
    var readMeta: String { "SELECT schema_version, store_id, key_epoch, generation FROM \(name).fleet_meta" }

    /// Enrols a host in the store's transaction of `init` or of a rotation (which hold the
    /// meta row already).
    var insertHost: String {
        """
        INSERT INTO \(name).fleet_hosts (host, key_source, salt, ops_limit, mem_limit, key_epoch, wrapped_key)
        VALUES ($1, $2, $3, $4, $5, $6, $7)
        """
    }
    /// Enrols a host with a wrapping of the data key of epoch $6: only while that is the store's.
    var enrolHost: String {
        guarded(
            """
            INSERT INTO \(name).fleet_hosts (host, key_source, salt, ops_limit, mem_limit, key_epoch, wrapped_key)
            SELECT $1, $2, $3, $4, $5, $6, $7 WHERE (SELECT key_epoch FROM m) = $6
            """)
    }
    /// The store's meta row and this host's wrapping, in one statement (one snapshot): a
    /// rotation is seen whole or not at all.
    var readMetaAndHost: String {
        """
        SELECT m.schema_version, m.store_id, m.key_epoch, h.key_source, h.salt, h.ops_limit, h.mem_limit, h.key_epoch, h.wrapped_key,
            m.generation, m.state_seal, m.key_chain
        FROM \(name).fleet_meta m LEFT JOIN \(name).fleet_hosts h ON h.host = $1
        """
    }
    /// Never the last host: the store would open nowhere. $2: the epoch of the caller's key.
    var deleteHost: String {
        guarded(
            """
            DELETE FROM \(name).fleet_hosts
            WHERE host = $1 AND (SELECT count(*) FROM \(name).fleet_hosts) > 1 AND (SELECT key_epoch FROM m) = $2
            """)
    }
    var deleteAllHosts: String { "DELETE FROM \(name).fleet_hosts" }
    var lockForRotation: String {
        "LOCK TABLE \(name).fleet_records IN EXCLUSIVE MODE; SELECT 1 FROM \(name).fleet_meta FOR UPDATE"
    }
    /// The rotation's last step: the new epoch, the seal of its state ($3) and its link of the
    /// key chain ($4), only over the epoch read ($2).
    var setEpoch: String {
        "UPDATE \(name).fleet_meta SET key_epoch = $1, state_seal = $3, key_chain = coalesce(key_chain, ''::bytea) || $4 WHERE key_epoch = $2"
    }
    /// The hosts enrolled by public key, with their wrappings (a rotation seals the new data key
    /// to each whose enrolment tag it verifies).
    var publicKeyHosts: String {
        "SELECT host, salt, key_epoch, wrapped_key FROM \(name).fleet_hosts WHERE key_source = 3 ORDER BY host"
    }
    /// An accepted restore's seal of the state as it is ($1), over the epoch ($2) and generation ($3) read.
    var resealState: String { "UPDATE \(name).fleet_meta SET state_seal = $1 WHERE key_epoch = $2 AND generation = $3" }
    /// The state a rotation re-seals on top of (in its transaction, which holds the meta row).
    var rotationState: String { "SELECT key_epoch, generation, state_seal FROM \(name).fleet_meta" }
    var listHosts: String { "SELECT host, key_source, key_epoch FROM \(name).fleet_hosts ORDER BY host" }

    /// One round trip gives the row and the generation it is consistent with (one snapshot).
    var readRecord: String {
        """
        SELECT m.generation, r.version, r.key_epoch, r.sealed, m.key_epoch, m.state_seal
        FROM \(name).fleet_meta m LEFT JOIN \(name).fleet_records r ON r.name_hash = $1
        """
    }

    // MARK: - Writes bound to the key epoch and the store's state

    /// `write` (an INSERT or DELETE of hosts that checks `(SELECT key_epoch FROM m)` against
    /// the epoch of the caller's key) run only while that is the store's epoch, reporting one
    /// row: the store's epoch (NULL without a meta row) and how many rows `write` changed.
    ///
    /// `m` locks the meta row (FOR NO KEY UPDATE, the lock the generation trigger takes anyway)
    /// before any other row: a rotation holds that row FOR UPDATE until it commits, so a write
    /// waits for it and then sees its epoch (READ COMMITTED re-reads a row it waited for), and
    /// a rotation waits for a write under way. Every writer takes the meta row first: no
    /// lock-order deadlock.
    private func guarded(_ write: String) -> String {
        """
        WITH m AS (SELECT key_epoch FROM \(name).fleet_meta FOR NO KEY UPDATE),
        w AS (\(write) RETURNING 1)
        SELECT (SELECT key_epoch FROM m), (SELECT count(*) FROM w)
        """
    }

    /// A write of records (`write`, whose condition ends with `bound(epoch, generation)`): as
    /// `guarded`, and also only over the store-wide generation the writer read and verified
    /// ($generation), with the seal of the state it leaves ($seal: the generation after its
    /// `n` rows, which the trigger counts) set in the same statement when it changed a row.
    /// Reports the store's epoch, the rows changed, the generation before the write and its
    /// seal: another generation than the one given means another write came first (verify that
    /// state and retry on it).
    private func sealedWrite(_ write: String, seal: Int) -> String {
        """
        WITH m AS (SELECT key_epoch, generation, state_seal FROM \(name).fleet_meta FOR NO KEY UPDATE),
        w AS (\(write) RETURNING 1),
        s AS (UPDATE \(name).fleet_meta SET state_seal = $\(seal) WHERE EXISTS (SELECT 1 FROM w))
        SELECT (SELECT key_epoch FROM m), (SELECT count(*) FROM w), (SELECT generation FROM m), (SELECT state_seal FROM m)
        """
    }

    /// The condition that binds a write to the epoch `$epoch` and the generation `$generation`.
    private func bound(epoch: Int, generation: Int) -> String {
        "(SELECT key_epoch FROM m) = $\(epoch) AND (SELECT generation FROM m) = $\(generation)"
    }

    /// $1 name hash, $2 version, $3 key epoch, $4 expiry, $5 sealed, $6 generation read, $7
    /// seal of generation + 1. 1 row changed = won, 0 = another writer came first or the store
    /// was rotated (the reported epoch and generation tell).
    var insertRecord: String {
        sealedWrite(
            """
            INSERT INTO \(name).fleet_records (name_hash, version, key_epoch, expires_at, sealed)
            SELECT $1, $2, $3, $4, $5 WHERE \(bound(epoch: 3, generation: 6))
            ON CONFLICT (name_hash) DO NOTHING
            """, seal: 7)
    }
    /// Compare-and-swap: $1 name hash, $2 the version read, $3 the new version, $4 key epoch,
    /// $5 expiry, $6 sealed, $7 generation read, $8 seal of generation + 1.
    var updateRecord: String {
        sealedWrite(
            """
            UPDATE \(name).fleet_records SET version = $3, key_epoch = $4, expires_at = $5, sealed = $6
            WHERE name_hash = $1 AND version = $2 AND \(bound(epoch: 4, generation: 7))
            """, seal: 8)
    }
    /// $1 name hash, $2 version, $3 key epoch, $4 generation read, $5 seal of generation + 1
    /// (a take, a delete, a purge of one expired row).
    var deleteRecordVersion: String {
        sealedWrite(
            "DELETE FROM \(name).fleet_records WHERE name_hash = $1 AND version = $2 AND \(bound(epoch: 3, generation: 4))", seal: 5)
    }
    /// $1 key epoch, $2 generation read, $3 seal of generation + the rows counted at it.
    var deleteEverything: String {
        sealedWrite("DELETE FROM \(name).fleet_records WHERE \(bound(epoch: 1, generation: 2))", seal: 3)
    }
    /// $1 now (ms since 1970), $2 key epoch, $3 generation read, $4 seal of generation + the
    /// expired rows counted at it.
    var purgeExpired: String {
        sealedWrite(
            "DELETE FROM \(name).fleet_records WHERE expires_at IS NOT NULL AND expires_at <= $1 AND \(bound(epoch: 2, generation: 3))",
            seal: 4)
    }
    /// The state and how many rows a bulk delete would change, in one snapshot: $1 NULL for
    /// every row, else now (ms since 1970) for the expired ones.
    var countForDelete: String {
        """
        SELECT m.key_epoch, m.generation, m.state_seal,
            (SELECT count(*) FROM \(name).fleet_records WHERE $1::int8 IS NULL OR (expires_at IS NOT NULL AND expires_at <= $1))
        FROM \(name).fleet_meta m
        """
    }

    // MARK: - The rotation's own statements (in its transaction, which holds the table and meta row)

    var rotationDeleteRecords: String { "DELETE FROM \(name).fleet_records" }
    var rotationInsertRecord: String {
        "INSERT INTO \(name).fleet_records (name_hash, version, key_epoch, expires_at, sealed) VALUES ($1, $2, $3, $4, $5)"
    }

    /// The state (epoch, generation, seal: columns 0-2) and the persistent rows (name hash,
    /// version, key epoch, sealed: columns 3-6; NULL when there is none) of one snapshot.
    var persistentRecords: String {
        """
        SELECT m.key_epoch, m.generation, m.state_seal, r.name_hash, r.version, r.key_epoch, r.sealed
        FROM \(name).fleet_meta m LEFT JOIN \(name).fleet_records r ON r.expires_at IS NULL
        """
    }
    /// The same with every row (and its expiry: column 7).
    var allRecordsWithState: String {
        """
        SELECT m.key_epoch, m.generation, m.state_seal, r.name_hash, r.version, r.key_epoch, r.sealed, r.expires_at
        FROM \(name).fleet_meta m LEFT JOIN \(name).fleet_records r ON true
        """
    }
    var allRecords: String { "SELECT name_hash, version, key_epoch, sealed, expires_at FROM \(name).fleet_records" }
    var countRecords: String { "SELECT count(*)::int8 FROM \(name).fleet_records" }
}
