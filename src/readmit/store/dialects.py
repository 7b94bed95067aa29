"""The only differences between the dialects in the schema's SQL (`readmit.store.schema`)."""

_LZ4_DECISIONS = (
    "DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' "
    "AND 'lz4' = ANY(enumvals)) THEN "
    "ALTER TABLE decisions ALTER COLUMN body SET COMPRESSION lz4; END IF; END $$"
)
"""PostgreSQL: decision bodies compressed with lz4 where the server has it (14 and later,
built with lz4); nothing otherwise. Only new rows are compressed so."""

_DROP_LOG_FK = (
    "DO $$ DECLARE c text; BEGIN FOR c IN SELECT conname FROM pg_constraint "
    "WHERE conrelid = 'events'::regclass AND contype = 'f' LOOP "
    "EXECUTE 'ALTER TABLE events DROP CONSTRAINT ' || quote_ident(c); END LOOP; END $$"
)
"""PostgreSQL: the log's foreign key to ``workspaces`` dropped (see ``m008``)."""

DIALECT = {
    "sqlite": {
        "serial": "INTEGER PRIMARY KEY",
        "without_rowid": "WITHOUT ROWID",
        "lz4_decisions": "SELECT 1",
        "log_fk": "SELECT 1",
    },
    "postgres": {
        "serial": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
        "without_rowid": "",
        "lz4_decisions": _LZ4_DECISIONS,
        "log_fk": _DROP_LOG_FK,
    },
}
"""What ``{serial}``, ``{without_rowid}``, ``{lz4_decisions}`` and ``{log_fk}`` stand for in a
migration's SQL, by dialect."""
