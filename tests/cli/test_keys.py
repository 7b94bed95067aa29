"""`readmit keys list` and `revoke`: a revoked key is refused at once by a running service."""

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import BACKENDS, store_url
from readmit.cli import cli
from readmit.errors import Unauthenticated
from readmit.model import Agent
from readmit.service.operations import Service
from readmit.signing import HmacSha256Signer
from readmit.store import open_store

TEAM = [Agent(id=a, principal="family", role="itinerary") for a in ("A1", "A2")]


@pytest.fixture
def db(tmp_path: Path) -> str:
    """A SQLite store with workspace ``trip`` of A1 and A2, closed."""
    url = f"sqlite:///{tmp_path}/k.db"
    store = open_store(url)
    store.create_workspace("trip", TEAM)
    store.close()
    return url


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_revoked_key_is_refused_at_once_and_only_it(
    runner: CliRunner, backend: str, tmp_path: Path
) -> None:
    with store_url(backend, tmp_path) as db:
        store = open_store(db)
        store.create_workspace("trip", TEAM)
        service = Service(store, signer=HmacSha256Signer(b"k" * 32), verifier=None)
        made = [
            runner.invoke(cli, ["keys", "create", "trip", a, "--db", db])
            for a in ("A1", "A1", "A2")
        ]
        first, second, theirs = (r.output.strip() for r in made)
        listed = runner.invoke(cli, ["keys", "list", "--db", db]).output.splitlines()
        fingerprint = next(
            line.split()[-1] for line in listed if line.startswith("trip  A1")
        )  # one of A1's two: which, the test does not care
        assert all(service.authenticate(k) for k in (first, second, theirs))

        one = runner.invoke(cli, ["keys", "revoke", "trip", "A1", "--key", fingerprint, "--db", db])
        after_one = runner.invoke(cli, ["keys", "list", "--workspace", "trip", "--db", db])
        rest = runner.invoke(cli, ["keys", "revoke", "trip", "A1", "--db", db])
        again = runner.invoke(cli, ["keys", "revoke", "trip", "A1", "--db", db])

        assert [len(listed), one.output, rest.output] == [
            3,
            "revoked 1 key(s) of A1 in trip\n",
            "revoked 1 key(s) of A1 in trip\n",
        ]
        assert all(re.fullmatch(r"trip  A[12]  \S+Z  sha256:[0-9a-f]{12}", line) for line in listed)
        assert len(after_one.output.splitlines()) == 2
        assert again.exit_code == 4
        assert "A1 has no key in workspace 'trip'" in again.output
        for key in (first, second):
            with pytest.raises(Unauthenticated):
                service.authenticate(key)
        assert service.authenticate(theirs).agent.id == "A2"
        store.close()


def test_a_key_start_that_names_several_keys_revokes_none(runner: CliRunner, db: str) -> None:
    for _ in range(2):
        runner.invoke(cli, ["keys", "create", "trip", "A1", "--db", db])

    result = runner.invoke(cli, ["keys", "revoke", "trip", "A1", "--key", "sha256:", "--db", db])

    assert result.exit_code == 2
    assert "'sha256:' starts 2 of A1's keys: give more of it" in result.output
    store = open_store(db)
    assert len(store.agent_keys("trip")) == 2
    store.close()


def test_a_key_for_a_missing_workspace_or_agent_names_what_exists(
    runner: CliRunner, db: str
) -> None:
    no_workspace = runner.invoke(cli, ["keys", "create", "trp", "A1", "--db", db])
    no_agent = runner.invoke(cli, ["keys", "create", "trip", "A9", "--db", db])

    assert (no_workspace.exit_code, no_agent.exit_code) == (4, 4)
    assert "error [not_found]: no workspace 'trp'" in no_workspace.output
    assert "no agent 'A9' in workspace 'trip' (its agents: A1, A2)" in no_agent.output


def test_a_key_given_itself_to_revoke_is_matched_by_its_hash_and_never_echoed(
    runner: CliRunner, db: str
) -> None:
    key = runner.invoke(cli, ["keys", "create", "trip", "A1", "--db", db]).output.strip()

    wrong = runner.invoke(cli, ["keys", "revoke", "trip", "A1", "--key", key + "x", "--db", db])
    right = runner.invoke(cli, ["keys", "revoke", "trip", "A1", "--key", key, "--db", db])

    assert wrong.exit_code == 4
    assert key not in wrong.output
    assert "A1 has no such key in workspace 'trip'" in wrong.output
    assert right.output == "revoked 1 key(s) of A1 in trip\n"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["keys", "list", "--workspace", "tirp"], "no workspace 'tirp' in this store"),
        (["audit", "--workspace", "tirp"], "no workspace 'tirp' in this store"),
        (["explain", "1", "--workspace", "trip", "--agent", "A9"], "no agent 'A9' in workspace"),
        (
            ["explain", "1", "--agent", "A9"],
            "agent 'A9' has no decision (see 'readmit audit --db {db}')",
        ),
        (["keys", "revoke", "tirp", "A1"], "no workspace 'tirp' in this store"),
        (["keys", "revoke", "trip", "A9"], "no agent 'A9' in workspace 'trip'"),
    ],
)
def test_an_unknown_workspace_or_agent_is_said_not_listed_as_nothing_stored(
    runner: CliRunner, db: str, args: list[str], said: str
) -> None:
    result = runner.invoke(cli, [*args, "--db", db])

    assert result.exit_code == 4, result.output
    assert said.format(db=db) in result.output
    assert "stored" not in result.output


@pytest.mark.parametrize("bare", [False, True], ids=["as listed", "hex only"])
def test_a_key_is_revoked_by_the_start_keys_list_shows_with_or_without_its_tag(
    runner: CliRunner, db: str, bare: bool
) -> None:
    runner.invoke(cli, ["keys", "create", "trip", "A1", "--db", db])
    listed = runner.invoke(cli, ["keys", "list", "--db", db]).output
    fingerprint = listed.split()[-1]  # sha256:<12 hex>
    given = fingerprint.removeprefix("sha256:") if bare else fingerprint

    result = runner.invoke(cli, ["keys", "revoke", "trip", "A1", "--key", given, "--db", db])

    assert result.output == "revoked 1 key(s) of A1 in trip\n"
