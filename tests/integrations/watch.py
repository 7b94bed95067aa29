"""Which thread decides a member's returns: what the async integrations' tests check."""

import threading
from typing import Any

import pytest

from readmit.integrations.team import Member


def deciding_threads(member: Member, monkeypatch: pytest.MonkeyPatch) -> list[threading.Thread]:
    """The thread of each of ``member``'s returns from now on, in order."""
    threads: list[threading.Thread] = []
    return_ = member.return_

    def watched(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread())
        return return_(*args, **kwargs)

    monkeypatch.setattr(member, "return_", watched)
    return threads
