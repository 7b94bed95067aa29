"""A store an older readmit made is upgraded where it is opened, and says so once."""

import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import store_url
from readmit.cli import cli
from readmit.model import Agent
from readmit.store import SqlStore, migrations, open_store
from readmit.store.upgrade import lacking

LAST = "m034_screenings_by_digest"


def _before_the_last_migration(store: SqlStore) -> None:
    """Undo `LAST` in ``store``, as a store of the readmit before it is."""
    with store.conn.transaction():
        store.conn.execute("DROP TABLE screenings")
        store.conn.execute(
            "CREATE TABLE screenings (workspace TEXT NOT NULL, principal TEXT NOT NULL, "
            "role TEXT NOT NULL, verifier TEXT NOT NULL, item TEXT NOT NULL, "
            "through BIGINT NOT NULL, at TEXT CHECK (at IS NOT NULL), "
            "PRIMARY KEY (workspace, principal, role, verifier, item))"
        )
        store.conn.execute("DELETE FROM _readmit_migrations WHERE name = ?", (LAST,))


def test_opening_a_store_an_older_readmit_made_warns_what_it_applied(
    backend: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Any command that opened it, `readmit audit` too, upgraded it silently (a probe)."""
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        assert isinstance(store, SqlStore)
        store.create_workspace("ws", [Agent(id="A1", principal="p", role="r")])
        _before_the_last_migration(store)
        store.close()

        with caplog.at_level(logging.WARNING, logger="readmit.store"):
            open_store(url).close()
            upgraded = [r.getMessage() for r in caplog.records]
            open_store(url).close()  # up to date: nothing more is said

    assert len(upgraded) == 1
    assert upgraded[0].startswith(f"upgraded the store to this readmit's schema: applied {LAST}")
    assert upgraded[0].endswith("; an older readmit no longer opens it")
    assert [r.getMessage() for r in caplog.records] == upgraded


def test_a_store_made_now_is_not_said_to_be_upgraded(
    backend: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        store_url(backend, tmp_path) as url,
        caplog.at_level(logging.WARNING, logger="readmit.store"),
    ):
        open_store(url).close()

    assert caplog.records == []


def test_a_store_with_no_workspace_yet_is_not_said_to_be_upgraded(
    backend: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Several processes opening a new PostgreSQL store at once each applied some of its
    migrations, and two of six warned of an upgrade (a review)."""
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        assert isinstance(store, SqlStore)
        _before_the_last_migration(store)  # as if another process had got this far
        store.close()

        with caplog.at_level(logging.WARNING, logger="readmit.store"):
            open_store(url).close()

    assert caplog.records == []


def _older(url: str) -> None:
    store = open_store(url)
    store.create_workspace("ws", [Agent(id="A1", principal="p", role="r")])
    _before_the_last_migration(store)
    store.close()


def _lacks(url: str) -> list[str]:
    store = open_store(url, migrate=False)
    try:
        return lacking(store.conn)
    finally:
        store.close()


def test_migrate_check_lists_what_the_store_lacks_and_applies_nothing(
    backend: str, tmp_path: Path
) -> None:
    with store_url(backend, tmp_path) as url:
        _older(url)

        checked = CliRunner().invoke(cli, ["migrate", "--check", "--db", url])

        assert checked.exit_code == 1, checked.output
        assert checked.stdout.splitlines()[:2] == ["the store lacks 1 migration:", f"  {LAST}"]
        assert _lacks(url) == [LAST]


def test_migrate_applies_what_the_store_lacks_then_finds_it_up_to_date(
    backend: str, tmp_path: Path
) -> None:
    with store_url(backend, tmp_path) as url:
        _older(url)

        applied = CliRunner().invoke(cli, ["migrate", "--db", url])
        again = CliRunner().invoke(cli, ["migrate", "--db", url])
        checked = CliRunner().invoke(cli, ["migrate", "--check", "--db", url])

        assert applied.exit_code == 0, applied.output
        assert applied.stdout.splitlines()[0] == f"applied {LAST}"
        assert "1 migration applied in" in applied.stdout
        assert _lacks(url) == []
        assert again.stdout.startswith("nothing to apply: the store is at this readmit's schema")
        assert checked.exit_code == 0
        assert checked.stdout == f"up to date: the store is at this readmit's schema ({LAST})\n"


def test_migrate_refuses_a_store_a_newer_readmit_migrated(backend: str, tmp_path: Path) -> None:
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        with store.conn.transaction():
            store.conn.execute("INSERT INTO _readmit_migrations (name) VALUES ('m999_future')")
        store.close()

        for args in (["migrate"], ["migrate", "--check"]):
            refused = CliRunner().invoke(cli, [*args, "--db", url])

            assert refused.exit_code == 4, refused.output
            assert "error [migration_error]: the store was migrated by a newer readmit" in (
                refused.stderr
            )


def test_migrate_makes_no_store_where_none_is(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"

    refused = CliRunner().invoke(cli, ["migrate", "--db", f"sqlite:///{missing}"])

    assert refused.exit_code == 2, refused.output
    assert "error [config_error]: no database at" in refused.stderr
    assert not missing.exists()


def test_a_migration_that_fails_names_those_applied_before_it(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each runs in its own transaction: those before the failing one stay applied, and
    only the failing one was named."""
    with store_url(backend, tmp_path) as url:
        _older(url)
        failing = ("m999_fails", ["SELECT no_such_column FROM workspaces"])
        monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, failing])

        refused = CliRunner().invoke(cli, ["migrate", "--db", url])

        assert refused.exit_code == 4, refused.output
        assert "migration m999_fails failed" in refused.stderr
        assert f"applied before it: {LAST}" in refused.stderr
        monkeypatch.undo()
        assert _lacks(url) == []
