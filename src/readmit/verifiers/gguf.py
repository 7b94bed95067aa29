"""A local verifier for a GGUF model file the user already has: ``gguf:PATH``.

The model is served in-process on loopback by xllamacpp (a prebuilt wheel that
embeds llama.cpp's OpenAI-compatible server), and judged through
`OpenAICompatVerifier`, so both share one tested request path. Optional extra:
``pip install 'readmit[gguf]'``.
"""

import os
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from readmit.errors import ConfigError
from readmit.verifiers.openai_compat import OpenAICompatVerifier, timeout_setting


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


def factory(argument: str, settings: Mapping[str, str] | None = None) -> OpenAICompatVerifier:
    """Serve ``PATH`` and return a verifier over it (the server lives as long as the verifier).

    Raises:
        ConfigError: if the file or xllamacpp is missing, or the timeout setting is bad.
    """
    timeout = timeout_setting(settings or {})
    server, label = serve(argument)
    return OpenAICompatVerifier(
        model=Path(argument).stem,
        base_url=server.base_url,
        keepalive=server,
        label=label,
        timeout=timeout,
    )
