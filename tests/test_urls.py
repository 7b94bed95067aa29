"""Store URLs and model specs in messages and logs: never with a password."""

import pytest

from readmit.errors import ConfigError
from readmit.urls import quotes_password, shown


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sqlite:///readmit.db", "sqlite:///readmit.db"),
        ("postgresql://u@h:5432/db", "postgresql://u@h:5432/db"),
        ("postgresql://u:S3cretPW@h/db", "postgresql://…"),
        ("postgresql://u@h/db?password=S3cretPW", "postgresql://…"),
        ("postgresql://u@h/db?pass%77ord=S3cretPW", "postgresql://…"),
        ("openai-compat:m@http://u:S3cretPW@h/v1", "openai-compat:m@http://…"),
        ("host=h password=ab//S3cretPW", "(not shown: it may hold a password)"),
    ],
)
def test_what_could_hold_a_password_is_not_shown(text: str, expected: str) -> None:
    assert shown(text) == expected


def test_a_password_libpq_split_is_still_found_in_its_message() -> None:
    """libpq stops a password at a raw / and reads the rest as the port (a review's
    finding: its message quoted the password as that port)."""
    url = "postgresql://:S3cretPW/x@127.0.0.1:1/db"

    assert quotes_password('invalid integer value "S3cretPW" for option "port"', url)
    assert not quotes_password("connection refused", url)


def test_a_postgresql_url_that_is_not_utf8_is_a_config_error() -> None:
    pytest.importorskip("psycopg")
    from readmit.store.postgres import PostgresConnection

    with pytest.raises(ConfigError, match="it is not UTF-8"):
        PostgresConnection("postgresql://u:cl\udce9@127.0.0.1:1/db")
