"""How many obligations a workspace holds open: what the service's cap on them reads."""

from contextlib import AbstractContextManager

from readmit.store.connection import Connection


class OpenObligations:
    """The part of `readmit.store.SqlStore` that counts a workspace's open obligations."""

    def _read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def open_obligations(self, workspace: str) -> int:
        """How many obligations are open (not resolved) in ``workspace`` now."""
        with self._read() as db:
            (count,) = db.execute(
                "SELECT COUNT(*) FROM obligations WHERE workspace = ? AND resolved_epoch IS NULL",
                (workspace,),
            ).fetchone()
        return int(count)
