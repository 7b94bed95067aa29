"""A local verifier for a GGUF model file the user already has: ``gguf:PATH``.

The model is served in-process on loopback by xllamacpp (a prebuilt wheel that
embeds llama.cpp's OpenAI-compatible server), and judged through
`OpenAICompatVerifier`, so both share one tested request path. Optional extra:
``pip install 'readmit[gguf]'``.

llama.cpp's server logs every load and request on the process's stderr (file
descriptor 2), from native threads. `log_to` sends that to a file instead; the
``readmit`` command does so for every command (`default_log_path`) unless
``readmit verifiers check --verbose`` asks to see it.
"""

import os
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from readmit.errors import ConfigError

if TYPE_CHECKING:
    from readmit.verifiers.openai_compat import OpenAICompatVerifier


def default_log_path(environ: Mapping[str, str]) -> Path:
    """``$XDG_CACHE_HOME/readmit/llama-server.log``, or under ``~/.cache`` without it."""
    cache = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "readmit" / "llama-server.log"


class _NativeLog:
    """Where native code's stderr goes: one setting per process, like the descriptor."""

    def __init__(self) -> None:
        self.target: Path | None = None
        self.path: Path | None = None
        """The file descriptor 2 was sent to, once a server started."""

    def engage(self) -> None:
        """Before a server starts: send file descriptor 2 to the target file, once.

        Python's own ``sys.stderr`` (errors, notes, progress) stays where it was; the
        path is said there once. A target that cannot be opened falls back to a new
        file in the temporary directory.
        """
        if self.target is None or self.path is not None:
            return
        fd, self.path = _open_log(self.target)
        os.write(fd, f"--- readmit, process {os.getpid()} ---\n".encode())
        sys.stderr.flush()
        kept = os.dup(2)
        os.dup2(fd, 2)
        os.close(fd)
        if _writes_to_fd2(sys.stderr):
            encoding, errors = sys.stderr.encoding, sys.stderr.errors
            sys.stderr = open(kept, "w", buffering=1, encoding=encoding, errors=errors)  # noqa: SIM115
        else:
            os.close(kept)
        sys.stderr.write(f"note: the model server's log is in {self.path}\n")


def _open_log(target: Path) -> tuple[int, Path]:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        return os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), target
    except OSError:
        fd, name = tempfile.mkstemp(prefix="readmit-llama-server-", suffix=".log")
        return fd, Path(name)


def _writes_to_fd2(stream: Any) -> bool:
    try:
        return bool(stream.fileno() == 2)
    except (AttributeError, OSError, ValueError):
        return False


_NATIVE_LOG = _NativeLog()


def log_to(path: Path | None) -> None:
    """Send the log of the servers started from now on to ``path`` (``None``: stderr).

    The redirection is of the process's file descriptor 2, where llama.cpp writes, so it
    holds for the rest of the process; ``sys.stderr`` is kept on the original stderr.
    """
    _NATIVE_LOG.target = path


class GgufServer:
    """llama.cpp's server for one GGUF file, in this process, on a free loopback port."""

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
            ConfigError: if xllamacpp is missing or the file does not exist.
        """
        try:
            import xllamacpp
        except ImportError as exc:
            raise ConfigError("gguf verifiers need xllamacpp: pip install 'readmit[gguf]'") from exc
        if not path.is_file():
            raise ConfigError(f"gguf:{path}: no such model file")
        params: Any = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = context
        params.cpuparams.n_threads = threads or max(1, (os.cpu_count() or 2))
        params.cpuparams_batch.n_threads = params.cpuparams.n_threads
        params.hostnames = ["127.0.0.1"]
        if embedding:
            params.embedding = True
            params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
        _NATIVE_LOG.engage()
        self._server: Any = xllamacpp.Server(params)
        self.base_url = f"{self._server.listening_address}/v1"
        self._wait_ready(f"{self._server.listening_address}/health", path)

    def _wait_ready(self, health: str, path: Path, timeout: float = 120.0) -> None:
        # Stopping a server whose loop has not started yet can hang in llama.cpp's
        # shutdown; a server is also of no use before it answers. Wait until it does.
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(health, timeout=5) as response:  # noqa: S310
                    if response.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise ConfigError(
                    f"gguf:{path}: the server did not become ready in {timeout:.0f} s"
                )
            time.sleep(0.05)

    def close(self) -> None:
        """Stop the server."""
        self._server = None


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
