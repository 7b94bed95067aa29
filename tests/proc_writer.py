"""A writer process for the durability test: appends TOTAL events in batches of BATCH,
printing the last epoch of every committed batch.

Usage: python proc_writer.py URL TOTAL BATCH
"""

import sys
from datetime import UTC, datetime, timedelta

from readmit.events import Assert, Event, Evidence, ItemDraft
from readmit.store import open_store

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def event(i: int) -> Event:
    """Every tenth event records evidence (a ``names`` row), the others assert an item."""
    at = T0 + timedelta(seconds=i)
    if i % 10 == 9:
        return Evidence(id=f"e{i}", at=at, author="W", source_id=f"s{i}", text=f"Receipt {i}.")
    item = ItemDraft(id=f"i{i}", text=f"Fact number {i}.", key=f"k{i % 97}")
    return Assert(id=f"e{i}", at=at, author="W", item=item)


def batch(start: int, size: int) -> list[Event]:
    return [event(i) for i in range(start, start + size)]


def main() -> None:
    url, total, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    store = open_store(url)
    for start in range(0, total, size):
        recorded = store.append("ws", batch(start, size))
        print(recorded[-1].epoch, flush=True)


if __name__ == "__main__":
    main()
