"""The newest item holding each of some keys, whoever may read it.

An integration whose store keeps one value a path, with the path as the readmit key
(LangGraph), shows an admitted item's path only while that item is the newest written
there: a later write of the path by an agent whose item the reader may not read (another
principal's), or by hearsay (which replaces nothing in readmit), put its own value in the
application's store, which no view of the reader judged.
"""

from collections.abc import Sequence
from contextlib import AbstractContextManager

from readmit.store.connection import Connection
from readmit.store.rows import CHUNK


class Held:
    """The part of `readmit.store.SqlStore` that tells which item last wrote each key."""

    def _read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def newest_items(self, workspace: str, keys: Sequence[str]) -> dict[str, str]:
        """The id of the newest item (any status, any reader) holding each of ``keys``."""
        newest: dict[str, str] = {}
        unique = sorted(set(keys))
        with self._read() as db:
            for start in range(0, len(unique), CHUNK):
                chunk = unique[start : start + CHUNK]
                marks = ", ".join("?" * len(chunk))  # placeholders only: no data in the SQL
                rows = db.execute(
                    f"SELECT key, id FROM items WHERE workspace = ? AND key IN ({marks}) "  # noqa: S608
                    "ORDER BY epoch",
                    (workspace, *chunk),
                ).fetchall()
                newest.update(rows)  # in epoch order: the last of each key stays
        return newest
