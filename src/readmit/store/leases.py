"""Leases: one holder at a time for work that several server processes could each do.

A lease is a row naming its holder and until when it holds (wall-clock seconds). It is
taken in a write transaction (serialized with every other writer of its workspace, in
every process), so two processes never both hold it; a holder that dies loses it when it
runs out. Used so that of several ``readmit serve --judge-ahead`` processes over one
database, one judges a workspace ahead at a time (`readmit.service.ahead`).
"""

import time

from readmit.store.connection import Connection


def take(db: Connection, lease: tuple[str, str], holder: str, seconds: float) -> bool:
    """Take or renew ``lease`` for ``seconds``; ``False`` if another holder has it.

    ``lease``: its workspace and name. ``seconds`` 0 gives it back (if ``holder`` has
    it) and returns ``False``.
    """
    now = time.time()
    if seconds <= 0:
        db.execute(
            "DELETE FROM leases WHERE workspace = ? AND name = ? AND holder = ?", (*lease, holder)
        )
        return False
    row = db.execute(
        "SELECT holder, until FROM leases WHERE workspace = ? AND name = ?", lease
    ).fetchone()
    if row is not None and row[0] != holder and row[1] > now:
        return False
    db.execute(
        "INSERT INTO leases (workspace, name, holder, until) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (workspace, name) DO UPDATE SET holder = excluded.holder, "
        "until = excluded.until",
        (*lease, holder, now + seconds),
    )
    return True
