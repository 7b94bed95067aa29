"""The child process that hosts llama.cpp's server for `readmit.verifiers.gguf.GgufServer`.

``python -P .../gguf_host.py PATH CONTEXT THREADS EMBEDDING`` (run by its path, so it
imports nothing of readmit) loads the file with xllamacpp, waits until the server
answers ``/health``, and writes one line to its standard output: ``READY <address>``
or ``ERROR <message>``. It then serves until its standard input closes (the parent
closed it, or the parent is gone) and leaves with ``os._exit``: llama.cpp's own
shutdown joins threads that do not always stop, which once left a test run waiting
forever. Its log goes to its standard error, which the parent points at a file or at
its own terminal.
"""

import os
import sys
import time
import urllib.request
from typing import Any, TextIO

READY_TIMEOUT = 300.0
"""Seconds the loaded server has to answer ``/health`` (a loaded 2-core machine is slow)."""


def _wait_ready(health: str) -> bool:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(health, timeout=5) as response:  # noqa: S310
                if response.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


def _serve(path: str, context: int, threads: int, embedding: bool) -> Any:
    import xllamacpp

    params: Any = xllamacpp.CommonParams()
    params.model.path = path
    params.n_ctx = context
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.hostnames = ["127.0.0.1"]
    if embedding:
        params.embedding = True
        params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
    return xllamacpp.Server(params)


def main(argv: list[str], answer: TextIO) -> int:
    """Serve until standard input closes; say ``READY``/``ERROR`` on ``answer``."""
    path, context, threads, embedding = argv
    try:
        server = _serve(path, int(context), int(threads), embedding == "1")
    except Exception as exc:  # any failure to load is the parent's error to report
        message = " ".join(f"{type(exc).__name__}: {exc}".split())
        answer.write(f"ERROR {message}\n")
        answer.flush()
        return 1
    address = server.listening_address
    if not _wait_ready(f"{address}/health"):
        answer.write(f"ERROR the server did not answer in {READY_TIMEOUT:.0f} s\n")
        answer.flush()
        return 1
    answer.write(f"READY {address}\n")
    answer.flush()
    sys.stdin.read()
    return 0


if __name__ == "__main__":
    # Only the READY/ERROR line goes to the parent's pipe: anything native code prints
    # on standard output goes to the log with the rest.
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    code = main(sys.argv[1:], protocol)
    sys.stderr.flush()
    os._exit(code)
