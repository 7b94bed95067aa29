"""The verifier's verdict cache: one verdict per judged pair key, shared by every workspace.

Backs `readmit.admission.invalidation.cache.JudgmentCache`: a pair judged once
(same texts, same verifier) is never sent to the verifier again. The first
verdict for a key is kept.
"""

import json
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager

from readmit.admission.invalidation.implicit import Verdict
from readmit.store.connection import Connection
from readmit.store.damaged import decoded_list

_JUDGMENTS = "SELECT key, invalidates, confidence, reason, terms FROM judgments"
LOCK = "_readmit_judgments"
"""The write lock of the verdict cache (it belongs to no workspace)."""


def load(db: Connection, keys: Sequence[str]) -> dict[str, Verdict]:
    """The cached verdicts of ``keys`` (those judged before)."""
    found: dict[str, Verdict] = {}
    for start in range(0, len(keys), 500):
        chunk = list(keys[start : start + 500])
        marks = ", ".join("?" * len(chunk))  # placeholders only: no data in the SQL
        rows = db.execute(_JUDGMENTS + f" WHERE key IN ({marks})", chunk).fetchall()
        for key, invalidates, confidence, reason, terms in rows:
            found[key] = Verdict(
                invalidates=bool(invalidates),
                confidence=confidence,
                reason=_text(reason),
                terms=tuple(map(_text, decoded_list(terms, "a cached verdict's terms"))),
            )
    return found


def _text(value: object) -> str:
    """A reason or a term of a cached verdict as a string, as verdicts must hold them.

    One kept before verdicts were checked (a verifier's bytes, on SQLite a blob) made the
    verdict refuse it, and its pair was withheld at every return, never judged again (a
    review).
    """
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if type(value) is str else str(value)


def insert(db: Connection, verifier: str, verdicts: Mapping[str, Verdict]) -> None:
    """Store ``verdicts``; a key already judged keeps its first verdict."""
    db.executemany(
        "INSERT INTO judgments (key, verifier, invalidates, confidence, reason, terms) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [
            (k, verifier, int(v.invalidates), v.confidence, v.reason, json.dumps(v.terms))
            for k, v in verdicts.items()
        ],
    )


class Judgments:
    """The part of `readmit.store.SqlStore` that keeps the verdict cache."""

    def _read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def _transaction(self, lock: str) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def judgments(self, keys: Sequence[str]) -> dict[str, Verdict]:
        """Cached verdicts (`readmit.admission.invalidation.cache.JudgmentCache`)."""
        with self._read() as db:
            return load(db, keys)

    def remember_judgments(self, verifier: str, verdicts: Mapping[str, Verdict]) -> None:
        """Store verdicts; a key already judged keeps its first verdict."""
        with self._transaction(lock=LOCK) as db:
            insert(db, verifier, verdicts)
