"""A private bank is read in one order on either database, whatever PostgreSQL's collation.

Its pages (``GET /v1/memories``) and the memories a return readmits follow that order; on
PostgreSQL it was the database's collation (an en-US one lists ``a_1, a1, b, B, é, Z``),
where SQLite compares ids by code point.
"""

import uuid
from collections.abc import Iterator

import psycopg
import pytest

from builders import T0
from conftest import postgres_url
from readmit.events import Assert, ItemDraft, RecordExperience
from readmit.model import Agent
from readmit.store import SqlStore, WorkStateStore, open_store

IDS = ["b", "Z", "a_1", "é", "B", "a1"]


@pytest.fixture
def en_us() -> Iterator[SqlStore]:
    """A store in a database of its own whose default collation is ICU's en-US."""
    base = postgres_url()
    name = f"t_icu_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base, autocommit=True) as admin:
        try:
            admin.execute(
                f"CREATE DATABASE {name} TEMPLATE template0 LOCALE_PROVIDER icu "
                "ICU_LOCALE 'en-US' LOCALE 'C'"
            )
        except psycopg.Error as exc:  # a server built without ICU
            pytest.skip(f"this PostgreSQL makes no ICU database: {exc}")
    store = open_store(f"{base.rsplit('/', 1)[0]}/{name}")
    assert isinstance(store, SqlStore)
    try:
        yield store
    finally:
        store.close()
        with psycopg.connect(base, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


def _bank(store: WorkStateStore) -> None:
    store.create_workspace("ws", [Agent(id="A1", principal="p", role="r")])
    item = ItemDraft(id="f", text="Room 12 is free.")
    store.append("ws", [Assert(id="e", at=T0, author="A1", item=item)])
    for memory in IDS:
        said = RecordExperience(
            id=f"x{memory}", at=T0, agent="A1", experience_id=memory, text="Noted.", source="f"
        )
        store.record_experience("ws", said)


@pytest.mark.postgres
def test_a_bank_reads_by_code_point_under_a_collation_that_does_not(
    en_us: SqlStore,
) -> None:
    _bank(en_us)
    (collated,) = en_us.conn.execute(  # the database's own order differs
        "SELECT string_agg(id, ' ' ORDER BY id) FROM experiences"
    ).fetchone()

    walked, after = [], None
    while True:
        page = en_us.experiences("ws", "A1", after, 2)
        walked += [e.id for e in page]
        if len(page) < 2:
            break
        after = page[-1].id

    assert collated.split() != sorted(IDS)
    assert [e.id for e in en_us.experiences("ws", "A1")] == sorted(IDS)
    assert walked == sorted(IDS)
