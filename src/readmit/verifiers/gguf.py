"""A local verifier for a GGUF model file the user already has: ``gguf:PATH``.

The model is served on loopback by xllamacpp (a prebuilt wheel that embeds
llama.cpp's OpenAI-compatible server) in a child process of its own
(`readmit.verifiers.gguf_host`), and judged through `OpenAICompatVerifier`, so both
share one tested request path. A child process can always be stopped: llama.cpp's
in-process shutdown joins threads that do not always stop. Optional extra:
``pip install '.[gguf]'``.

llama.cpp's server logs every load and request on its standard error. `log_to` sends
that to a file instead; the ``readmit`` command does so for every command
(`default_log_path`) unless ``readmit verifiers check --verbose`` asks to see it.
"""

import importlib.util
import os
import selectors
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING

from readmit.errors import ConfigError, install_hint
from readmit.urls import shown

if TYPE_CHECKING:
    from readmit.verifiers.openai_compat import OpenAICompatVerifier

START_TIMEOUT = 600.0
"""Seconds a server has to load its file and answer (generous: a busy 2-core machine)."""

STOP_TIMEOUT = 10.0
"""Seconds a server has to leave once told to, before it is killed."""


def default_log_path(environ: Mapping[str, str]) -> Path:
    """``$XDG_CACHE_HOME/readmit/llama-server.log``, or under ``~/.cache`` without it."""
    cache = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "readmit" / "llama-server.log"


class _ServerLog:
    """Where the servers' logs go: one setting per process."""

    def __init__(self) -> None:
        self.target: Path | None = None
        self.path: Path | None = None
        """The file the logs go to, once a server started."""

    def descriptor(self) -> int | None:
        """A descriptor of the log file for a server's standard error (``None``: ours).

        The path is said on ``sys.stderr`` once. A target that cannot be opened falls
        back to a new file in the temporary directory.
        """
        if self.target is None:
            return None
        fd, path = _open_log(self.path or self.target)
        if self.path is None:
            self.path = path
            sys.stderr.write(f"note: the model server's log is in {path}\n")
        os.write(fd, f"--- readmit, process {os.getpid()} ---\n".encode())
        return fd


def _open_log(target: Path) -> tuple[int, Path]:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        return os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), target
    except OSError:
        fd, name = tempfile.mkstemp(prefix="readmit-llama-server-", suffix=".log")
        return fd, Path(name)


_LOG = _ServerLog()


def log_to(path: Path | None) -> None:
    """Send the log of the servers started from now on to ``path`` (``None``: stderr)."""
    _LOG.target = path
    _LOG.path = None


class GgufServer:
    """llama.cpp's server for one GGUF file, in a child process, on a free loopback port."""

    def __init__(
        self,
        path: Path,
        *,
        context: int = 2048,
        threads: int | None = None,
        embedding: bool = False,
    ) -> None:
        """Start serving ``path``; with ``embedding``, ``/v1/embeddings`` (mean pooling) only.

        Raises:
            ConfigError: if xllamacpp is missing, the file does not exist or the server
                does not start.
        """
        if importlib.util.find_spec("xllamacpp") is None:
            raise ConfigError(f"gguf verifiers need xllamacpp: {install_hint('gguf')}")
        try:
            found = path.is_file()
        except OSError as exc:  # a name too long for the file system, say
            raise ConfigError(f"gguf:{shown(str(path))}: {exc.strerror or exc}") from None
        if not found:
            raise ConfigError(f"gguf:{shown(str(path))}: no such model file")
        threads = threads or max(1, os.cpu_count() or 2)
        log = _LOG.descriptor()
        try:
            process = subprocess.Popen(  # noqa: S603 - our own file, by this interpreter
                [
                    sys.executable,
                    "-P",  # by its path, without importing readmit (or its folder on sys.path)
                    str(Path(__file__).with_name("gguf_host.py")),
                    str(path),
                    str(context),
                    str(threads),
                    "1" if embedding else "0",
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
            )
        finally:
            if log is not None:
                os.close(log)
        self._process = process
        self._stop = weakref.finalize(self, _stop, process)
        answer = _first_line(process, time.monotonic() + START_TIMEOUT)
        if not answer.startswith("READY "):
            running = process.poll() is None
            self.close()
            said = answer.removeprefix("ERROR ") or (
                f"the server did not start in {START_TIMEOUT:.0f} s"
                if running
                else f"the server exited with status {process.returncode}"
            )
            where = f"; its log is in {_LOG.path}" if _LOG.path else ""
            raise ConfigError(f"gguf:{path}: {said}{where}")
        self.base_url = f"{answer.removeprefix('READY ')}/v1"

    @property
    def running(self) -> bool:
        """Whether the server's process is still there."""
        return self._process.poll() is None

    def close(self) -> None:
        """Stop the server (at once, if it does not leave when told)."""
        self._stop()


def _first_line(process: "subprocess.Popen[bytes]", deadline: float) -> str:
    """The first line the server writes by ``deadline``, or what came before it ended."""
    stream: IO[bytes] | None = process.stdout
    if stream is None:
        return ""
    got = b""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        while b"\n" not in got and selector.select(max(0.0, deadline - time.monotonic())):
            chunk = os.read(stream.fileno(), 4096)
            if not chunk:
                break
            got += chunk
    return got.split(b"\n", 1)[0].decode(errors="replace").strip()


def _stop(process: "subprocess.Popen[bytes]") -> None:
    if process.stdin is not None:
        process.stdin.close()
    try:
        process.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()


def serve(argument: str, *, embedding: bool = False) -> tuple[GgufServer, str]:
    """Serve the file a ``gguf:PATH`` spec names; return the server and its stable identity.

    The identity names the file, not the loopback port, so judgment caches survive restarts.

    Raises:
        ConfigError: if no path is given, the file is missing or xllamacpp is not installed.
    """
    path = Path(argument).expanduser()
    label = identity(argument)
    return GgufServer(path, embedding=embedding), label


def identity(argument: str) -> str:
    """The stable identity of a ``gguf:PATH`` spec: the resolved file, never the port.

    Raises:
        ConfigError: if no path is given.
    """
    if not argument:
        raise ConfigError("gguf:PATH: give the path of a .gguf model file")
    return f"gguf:{Path(argument).expanduser().resolve()}"


def factory(argument: str, settings: Mapping[str, str] | None = None) -> "OpenAICompatVerifier":
    """Serve ``PATH`` and return a verifier over it (the server lives as long as the verifier).

    Raises:
        ConfigError: if the file or xllamacpp is missing, or the timeout setting is bad.
    """
    from readmit.verifiers.openai_compat import OpenAICompatVerifier, timeout_setting

    timeout = timeout_setting(settings or {})
    server, label = serve(argument)
    return OpenAICompatVerifier(
        model=Path(argument).stem,
        base_url=server.base_url,
        keepalive=server,
        label=label,
        timeout=timeout,
    )
