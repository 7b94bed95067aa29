"""Ctrl-C reaches the main thread: numpy is imported with it blocked in the threads it starts.

numpy's BLAS starts a worker thread when it is imported. The kernel may hand a process's
SIGINT to any thread that does not block it; Python then only sets a flag, and a main
thread blocked in a read (``readmit replay`` reading its scenario from a pipe) never wakes
to raise `KeyboardInterrupt`: the command hung in CI (stop 71, its stack in the read).
Threads inherit the mask of the thread that starts them, so numpy is imported here, first
of readmit's imports, with SIGINT blocked, and the mask put back after.
"""

import signal

_MASK = getattr(signal, "pthread_sigmask", None)  # POSIX only
_BEFORE = _MASK(signal.SIG_BLOCK, {signal.SIGINT}) if _MASK is not None else None
try:
    import numpy  # noqa: F401
finally:
    if _MASK is not None and _BEFORE is not None:
        _MASK(signal.SIG_SETMASK, _BEFORE)
