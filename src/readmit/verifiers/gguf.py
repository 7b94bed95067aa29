"""A local verifier for a GGUF model file the user already has: ``gguf:PATH``.

The model is served in-process on loopback by xllamacpp (a prebuilt wheel that
embeds llama.cpp's OpenAI-compatible server), and judged through
`OpenAICompatVerifier`, so both share one tested request path. Optional extra:
``pip install 'readmit[gguf]'``.
"""

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from readmit.errors import ConfigError
from readmit.verifiers.openai_compat import OpenAICompatVerifier


class GgufServer:
    """llama.cpp's server for one GGUF file, in this process, on a free loopback port."""

    def __init__(self, path: Path, *, context: int = 2048, threads: int | None = None) -> None:
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
        self._server: Any = xllamacpp.Server(params)
        self.base_url = f"{self._server.listening_address}/v1"

    def close(self) -> None:
        """Stop the server."""
        self._server = None


def factory(argument: str, settings: Mapping[str, str] | None = None) -> OpenAICompatVerifier:
    """Serve ``PATH`` and return a verifier over it (the server lives as long as the verifier)."""
    if not argument:
        raise ConfigError("gguf:PATH: give the path of a .gguf model file")
    server = GgufServer(Path(argument).expanduser())
    return OpenAICompatVerifier(
        model=Path(argument).stem, base_url=server.base_url, keepalive=server
    )
