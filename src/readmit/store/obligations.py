"""How many obligations a principal holds open: what the service's cap on them reads."""

from contextlib import AbstractContextManager

from readmit.store.connection import Connection

_OPEN = (
    "SELECT COUNT(*) FROM obligations o "
    "JOIN events e ON e.workspace = o.workspace AND e.epoch = o.epoch "
    "JOIN agents a ON a.workspace = e.workspace AND a.id = e.author "
    "WHERE o.workspace = ? AND o.resolved_epoch IS NULL AND a.principal = ?"
)
"""The open obligations that agents of one principal opened (an obligation is resolved, and
read, only by its own principal's agents)."""


class OpenObligations:
    """The part of `readmit.store.SqlStore` that counts a principal's open obligations."""

    def _read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def open_obligations(self, workspace: str, principal: str) -> int:
        """How many obligations agents of ``principal`` hold open in ``workspace`` now."""
        with self._read() as db:
            (count,) = db.execute(_OPEN, (workspace, principal)).fetchone()
        return int(count)
