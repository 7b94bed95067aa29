"""`readmit serve`'s flags: every limit of the service has one, and a bad value is a
config error before anything starts."""

import inspect
from pathlib import Path

import pytest
from click.testing import CliRunner

from readmit.cli import cli
from readmit.service.settings import limits_from_flags
from readmit.urls import logged


def test_every_limit_has_a_serve_flag() -> None:
    serve = cli.commands["serve"]
    flags = {opt for param in serve.params for opt in getattr(param, "opts", [])}
    limits = inspect.signature(limits_from_flags).parameters

    assert {f"--{name.replace('_', '-')}" for name in limits} <= flags


def test_the_mcp_server_takes_the_limits_that_apply_to_one_agent() -> None:
    mcp = cli.commands["mcp"]
    flags = {opt for param in mcp.params for opt in getattr(param, "opts", [])}

    assert {
        "--clock-skew",
        "--max-view-ttl",
        "--max-labels",
        "--max-open-obligations",
        "--judge-ahead",
    } <= flags


BYTE_RATE = "byte_rate must be a positive number of bytes per second"


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        *(("--byte-rate", value, BYTE_RATE) for value in ("-5", "0", "nan")),
        *(("--judge-ahead", value, "--judge-ahead") for value in ("0", "-1", "nan", "inf")),
    ],
)
def test_a_flag_that_is_no_positive_number_is_refused_before_anything_starts(
    flag: str, value: str, said: str, tmp_path: Path
) -> None:
    db = tmp_path / "readmit.db"
    result = CliRunner().invoke(
        cli,
        ["serve", "--db", f"sqlite:///{db}", flag, value],
        env={"READMIT_SIGNING_KEY": "a-test-signing-key-0123"},
    )

    assert result.exit_code == 2, result.output
    assert said in result.output
    assert not db.exists()


def test_a_server_without_a_signing_key_says_how_to_make_one(tmp_path: Path) -> None:
    db = tmp_path / "readmit.db"
    result = CliRunner().invoke(
        cli, ["serve", "--db", f"sqlite:///{db}"], env={"READMIT_SIGNING_KEY": ""}
    )

    assert result.exit_code != 0
    assert "set READMIT_SIGNING_KEY to the key views are signed with" in result.output
    assert "readmit keys signing" in result.output
    assert not db.exists()


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://me:S3cretPW@db:5432/readmit",
        "postgresql://me@db/readmit?sslmode=require&password=S3cretPW",
        "postgresql://me@db/readmit?pass%77ord=S3cretPW",  # libpq decodes the key too
        "postgresql://me:S3c?retPW@db/readmit",  # a raw ? or # in it is libpq's password
        "postgres://me:S3c%23retPW@db/readmit",
        "postgresql://me@db/readmit?sslpassword=S3cretPW",  # a client key's password
    ],
)
def test_the_store_a_server_serves_is_logged_without_its_password(url: str) -> None:
    """As libpq reads the URL, less the password (a reviewer's findings: each of these
    forms printed it)."""
    shown = logged(url)

    assert shown.startswith("PostgreSQL ")
    assert "user=me" in shown
    assert "host=db" in shown
    assert "S3c" not in shown


def test_a_sqlite_store_is_logged_as_given() -> None:
    assert logged("sqlite:///readmit.db") == "sqlite:///readmit.db"


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_a_server_over_a_sqlite_file_that_is_not_there_is_refused_and_makes_none(
    command: str, tmp_path: Path
) -> None:
    """A mistyped --db would be a new, empty store: every agent key refused."""
    db = tmp_path / "typo.db"
    result = CliRunner().invoke(
        cli,
        [command, "--db", f"sqlite:///{db}"],
        env={"READMIT_SIGNING_KEY": "k" * 32, "READMIT_AGENT_KEY": "rmk_x"},
    )

    assert result.exit_code == 2, result.output
    assert f"no database at {str(db)!r}" in result.output
    assert "readmit workspace create NAME" in result.output
    assert not db.exists()


def test_a_port_in_use_is_refused_before_anything_starts(tmp_path: Path) -> None:
    import socket

    db = tmp_path / "readmit.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            cli,
            ["serve", "--db", f"sqlite:///{db}", "--port", str(port)],
            env={"READMIT_SIGNING_KEY": "k" * 32},
        )

    assert result.exit_code == 2, result.output
    assert f"cannot listen on 127.0.0.1:{port}" in result.output
    assert not db.exists()


def test_a_port_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    db = tmp_path / "readmit.db"
    result = CliRunner().invoke(
        cli,
        ["serve", "--db", f"sqlite:///{db}", "--port", "99999"],
        env={"READMIT_SIGNING_KEY": "k" * 32},
    )

    assert result.exit_code == 2, result.output
    assert "99999 is not in the range 0<=x<=65535" in result.output
    assert not db.exists()
