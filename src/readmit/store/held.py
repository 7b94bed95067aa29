"""What the newest item holding each of some keys says, whoever may read it.

An integration whose store keeps one value a path, with the path as the readmit key
(LangGraph), shows an admitted item's path only while the newest item written there says
what the admitted one says: a later write of the path by an agent whose item the reader
may not read (another principal's), or by hearsay (which replaces nothing in readmit),
put its own value in the application's store, which no view of the reader judged.
"""

from collections.abc import Sequence
from contextlib import AbstractContextManager

from readmit.store.connection import Connection
from readmit.store.rows import CHUNK
from readmit.wire.codec import item_from_json
from readmit.wire.logged import loads


class Held:
    """The part of `readmit.store.SqlStore` that tells what each key's newest item says."""

    def _read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def newest_texts(self, workspace: str, keys: Sequence[str], upto: int) -> dict[str, str]:
        """What the newest item (any status, any reader) of each of ``keys`` says, up to ``upto``.

        Only items asserted at or before epoch ``upto`` count.
        """
        bodies: dict[str, str] = {}
        unique = sorted(set(keys))
        with self._read() as db:
            for start in range(0, len(unique), CHUNK):
                chunk = unique[start : start + CHUNK]
                marks = ", ".join("?" * len(chunk))  # placeholders only: no data in the SQL
                rows = db.execute(
                    f"SELECT key, body FROM items WHERE workspace = ? AND key IN ({marks}) "  # noqa: S608
                    "AND epoch <= ? ORDER BY epoch",
                    (workspace, *chunk, upto),
                ).fetchall()
                bodies.update(rows)  # in epoch order: the last of each key stays
        return {key: item_from_json(loads(body)).text for key, body in bodies.items()}
