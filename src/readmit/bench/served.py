"""``readmit serve`` in a process of its own, for the benchmark scripts under ``bench/``."""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

_AHEAD = (
    "import sys; from datetime import timedelta; import readmit.clock as c; "
    "real, ahead = c.now, timedelta(seconds=float(sys.argv[1])); "
    "c.now = lambda: real() + ahead; "
    "from readmit.cli import main; sys.argv = ['readmit', *sys.argv[2:]]; main()"
)
"""``readmit`` with this machine's wall clock (`readmit.clock.now`) read ``argv[1]`` s ahead."""


@contextmanager
def served(
    db: str, signing_key: str, *flags: str, ahead: float = 0.0
) -> Iterator[tuple[str, "subprocess.Popen[bytes]"]]:
    """``readmit serve --db DB [flags]`` on a free loopback port, until the block ends.

    Yields its base URL, once it answers ``/health``, and the process. Its log is
    discarded: a pipe nobody read would fill and stop the server. ``ahead``: the server
    reads the wall clock so many seconds ahead, as on a machine whose clock runs ahead.

    Raises:
        RuntimeError: if it exits, or does not answer within two minutes.
    """
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    readmit = (
        [sys.executable, "-c", _AHEAD, str(ahead)] if ahead else [sys.executable, "-m", "readmit"]
    )
    command = [*readmit, "serve", "--db", db, "--port", str(port), *flags]
    env = {**os.environ, "READMIT_SIGNING_KEY": signing_key}
    proc = subprocess.Popen(  # noqa: S603 - this interpreter's readmit, the caller's flags
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120  # a busy machine starts slowly
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"readmit serve did not start ({proc.poll()=})") from None
                time.sleep(0.1)
        yield base, proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)
