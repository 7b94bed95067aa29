"""Proof, not promise: a writer killed mid-ingest loses nothing committed and leaves nothing
partial; concurrent writers on PostgreSQL get strictly increasing, gap-free epochs."""

import signal
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conftest import fresh_postgres_schema, store_url
from readmit.clock import now
from readmit.events import Assert, ItemDraft
from readmit.model import Agent
from readmit.store import open_store

WRITER = Path(__file__).parent.parent / "proc_writer.py"
TOTAL, BATCH = 10_000, 50


def test_a_killed_writer_loses_no_committed_event_and_leaves_no_partial_one(
    backend: str, tmp_path: Path
) -> None:
    with store_url(backend, tmp_path) as url:
        setup = open_store(url)
        setup.create_workspace("ws", [Agent(id="W", principal="p", role="r")])
        setup.close()
        with subprocess.Popen(
            [sys.executable, str(WRITER), url, str(TOTAL), str(BATCH)],
            stdout=subprocess.PIPE,
            text=True,
        ) as proc:
            assert proc.stdout is not None
            committed = 0
            while committed < TOTAL // 5:
                line = proc.stdout.readline()
                assert line, "the writer died before it was killed"
                committed = int(line)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)

        store = open_store(url)
        epochs = [r.epoch for r in store.events("ws")]
        items = store.conn.execute("SELECT COUNT(*) FROM items WHERE workspace = 'ws'").fetchone()
        names = store.conn.execute("SELECT COUNT(*) FROM names WHERE workspace = 'ws'").fetchone()
        sources = store.conn.execute(
            "SELECT COUNT(*) FROM evidence WHERE workspace = 'ws'"
        ).fetchone()
        store.close()

    assert proc.returncode == -signal.SIGKILL
    assert len(epochs) >= committed
    assert len(epochs) < TOTAL
    assert epochs == list(range(1, len(epochs) + 1))
    assert len(epochs) % BATCH == 0
    # Every tenth event records evidence (a name), the others assert an item.
    assert names[0] == sources[0] == len(epochs) // 10
    assert items[0] == len(epochs) - len(epochs) // 10


@pytest.mark.postgres
def test_32_concurrent_writers_get_gap_free_strictly_increasing_epochs() -> None:
    writers, per_writer, batch = 32, 40, 4
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    with fresh_postgres_schema() as url:
        setup = open_store(url)
        setup.create_workspace(
            "ws", [Agent(id=f"w{n}", principal="p", role="r") for n in range(writers)]
        )
        setup.close()
        errors: list[BaseException] = []
        start = threading.Barrier(writers)

        def write(n: int) -> None:
            try:
                store = open_store(url)
                start.wait()
                for b in range(0, per_writer, batch):
                    store.append(
                        "ws",
                        [
                            Assert(
                                id=f"w{n}-{i}",
                                at=t0,
                                author=f"w{n}",
                                item=ItemDraft(id=f"w{n}-i{i}", text=f"{n}/{i}"),
                            )
                            for i in range(b, b + batch)
                        ],
                        clock=now,
                    )
                store.close()
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        store = open_store(url)
        recorded = store.events("ws")
        store.close()

    assert not errors, errors[:3]
    ids = [r.event.id for r in recorded]
    assert [r.epoch for r in recorded] == list(range(1, writers * per_writer + 1))
    assert len(set(ids)) == len(ids) == writers * per_writer
    for n in range(writers):
        mine = [int(i.split("-")[1]) for i in ids if i.startswith(f"w{n}-")]
        assert mine == list(range(per_writer)), f"writer {n}'s events are out of order"
