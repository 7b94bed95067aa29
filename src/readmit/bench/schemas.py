"""A fresh PostgreSQL schema for each store a benchmark (or a test) makes on one server."""

import uuid
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def fresh_schema(base: str, prefix: str = "bench") -> Iterator[str]:
    """A URL whose connections see only a new, empty schema of ``base``'s database.

    The schema is named ``prefix`` and a random part, and dropped afterwards.
    """
    import psycopg

    schema = f"{prefix}_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{base}?options=-c%20search_path%3D{schema}"
    finally:
        with psycopg.connect(base, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")
