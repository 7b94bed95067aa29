"""``readmit serve --shared-limits``: two real server processes over one store give an agent
one budget between them; without the flag each gives it its own."""

from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from servicekit import keyed_workspace, served

LIMITS = ("--rate", "0.001", "--burst", "3")  # a token in 1,000 s: none refills in a test


def statuses(db: str, key: str, *flags: str) -> list[int]:
    """Eight requests of A1's, alternating between two servers over ``db``."""
    with ExitStack() as stack:
        urls = [stack.enter_context(served(db, *LIMITS, *flags))[0] for _ in range(2)]
        headers = {"Authorization": f"Bearer {key}"}
        return [
            httpx.get(f"{urls[n % 2]}/v1/decisions", headers=headers, timeout=60).status_code
            for n in range(8)
        ]


@pytest.mark.slow
def test_two_servers_sharing_limits_give_an_agent_one_burst(tmp_path: Path) -> None:
    db, key = keyed_workspace(tmp_path)

    assert statuses(db, key, "--shared-limits") == [200] * 3 + [429] * 5


@pytest.mark.slow
def test_two_servers_without_sharing_give_an_agent_a_burst_each(tmp_path: Path) -> None:
    db, key = keyed_workspace(tmp_path)

    assert statuses(db, key) == [200] * 6 + [429] * 2
