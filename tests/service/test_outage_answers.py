"""What a client and the operator's log are told while the database fails."""

import logging
import sqlite3

import psycopg
import pytest

from readmit.errors import StoreError
from readmit.service import answers
from readmit.service.answers import UNAVAILABLE, UNSURE, message_of
from readmit.store.deadline import UNKNOWN


def failed(text: str, cause: Exception) -> StoreError:
    error = StoreError(text)
    error.__cause__ = cause
    return error


def test_a_client_is_told_when_whether_its_write_was_recorded_is_unknown() -> None:
    lost = psycopg.OperationalError("server closed the connection unexpectedly")

    unsure = message_of(failed(f"PostgreSQL: {lost}; {UNKNOWN}", lost))
    refused = message_of(failed(f"PostgreSQL: {lost}", lost))

    assert unsure == f"{UNAVAILABLE}; {UNSURE}"
    assert refused == UNAVAILABLE
    assert "127.0.0.1" not in unsure


def test_an_outage_is_logged_once_a_second_with_how_many_were_left_out(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """One line a failed request buried the rest of the log (280 in 20 s, a review)."""
    clock = [1000.0]
    monkeypatch.setattr(answers, "_logged", answers._Seldom(answers._log, lambda: clock[0]))
    locked = sqlite3.OperationalError("database is locked")
    with caplog.at_level(logging.WARNING, logger=answers.__name__):
        for _ in range(5):
            message_of(failed("SQLite: database is locked", locked))
        message_of(failed("SQLite: no such table: agent_keys", locked))  # another: at once
        clock[0] += 1.5
        message_of(failed("SQLite: database is locked", locked))

    said = [r.getMessage() for r in caplog.records]
    assert said == [
        "the store's database failed: SQLite: database is locked",
        "the store's database failed: SQLite: no such table: agent_keys",
        "the store's database failed: SQLite: database is locked "
        "(4 more like it left out of the log)",
    ]


def test_messages_that_differ_only_in_numbers_are_one_kind_and_no_count_is_lost(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = [1000.0]
    seldom = answers._Seldom(answers._log, lambda: clock[0])
    with caplog.at_level(logging.WARNING, logger=answers.__name__):
        for pid in range(300):  # PostgreSQL's words name its process
            seldom.warning("failed: %s", f"terminating connection\nDETAIL: process {pid}")
        clock[0] += 2
        for n in range(seldom.KINDS):  # as many other kinds: the first is let go, counted
            seldom.warning("failed: %s", f"kind {'x' * n}")

    said = [r.getMessage() for r in caplog.records]
    assert said[0] == "failed: terminating connection\nDETAIL: process 0"
    counted = "failed: terminating connection\nDETAIL: process 299 (299 more like it left out"
    assert [m for m in said if m.startswith(counted)]
    assert len(said) == 2 + seldom.KINDS
