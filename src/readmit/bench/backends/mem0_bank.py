"""The Mem0 backend: `ReadmitMemory` per agent over one shared, offline Mem0 ``Memory``.

Offline as in the integration's tests: an in-memory Qdrant collection, a local
bag-of-words embedder (Mem0 builds its configured embedder and LLM, but neither is
ever called) and ``add(..., infer=False)``, so each item is stored as written. An
item's scenario key travels as the memory's ``metadata["key"]``, the wrapper's key, and
its other annotations as ``metadata["_readmit"]``: a premise whose memory still holds
it is named ``{"memory": id}``, one a later update replaced by its item id.
"""

import atexit
import hashlib
import logging
import os
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from readmit.bench.backends.base import Paths, Tally
from readmit.bench.backends.team import Tracking, annotations
from readmit.events import Assert, ItemDraft, Revoke, Supersede
from readmit.integrations.annotations import ANNOTATIONS

DIMS = 256
BANK = {"user_id": "team"}
_READS = frozenset({"get", "get_all", "search", "history"})
_WRITES = frozenset({"add", "update", "delete"})


def quiet_home() -> None:
    """Telemetry off and mem0's files in a temporary folder removed at exit.

    Call it before ``mem0`` is imported: it reads both settings then. A ``MEM0_DIR``
    already set is kept.
    """
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    if "MEM0_DIR" not in os.environ:
        home = tempfile.mkdtemp(prefix="readmit-mem0-")
        atexit.register(shutil.rmtree, home, True)
        os.environ["MEM0_DIR"] = home


def _mem0() -> Any:
    """The ``mem0`` module, imported with telemetry off and its files in a temporary folder."""
    quiet_home()
    import mem0

    return mem0


def embed(text: str) -> list[float]:
    """A deterministic bag-of-words vector: each word hashed to one of `DIMS` axes."""
    vector = [0.0] * DIMS
    for word in text.lower().split():
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIMS] += 1.0
    return vector


class WordEmbedder:
    """Mem0's embedder interface over `embed`."""

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        return embed(text)


def bank(
    folder: Path,
    collection: str | None = None,
    *,
    asynchronous: bool = False,
    memory_class: type | None = None,
) -> Any:
    """A fresh offline ``mem0.Memory`` (``AsyncMemory``) with its history database in ``folder``.

    Mem0 builds its configured embedder and LLM, but neither is ever called: the embedder
    is replaced by `WordEmbedder` and adds use ``infer=False`` (a caller that adds with
    ``infer=True`` sets ``memory.llm`` to a local LLM first). ``memory_class``: a
    subclass of ``Memory`` (``AsyncMemory``) to build instead. Also what the
    integration's tests and bench/integrations_mem0.py run on.
    """
    mem0 = _mem0()
    from mem0.configs.base import MemoryConfig
    from qdrant_client import QdrantClient

    collection = collection or f"bench-{uuid.uuid4().hex[:12]}"
    config = MemoryConfig(
        vector_store={
            "provider": "qdrant",
            "config": {
                "client": QdrantClient(location=":memory:"),
                "collection_name": collection,
                "embedding_model_dims": DIMS,
            },
        },
        embedder={"provider": "openai", "config": {"api_key": "offline"}},
        llm={"provider": "openai", "config": {"api_key": "offline"}},
        history_db_path=str(folder / f"{collection}.db"),
    )
    logging.getLogger("mem0").setLevel(logging.ERROR)  # notices about optional extras
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # local Qdrant ignores payload indexes
        made = memory_class or (mem0.AsyncMemory if asynchronous else mem0.Memory)
        memory = made(config)
    memory.embedding_model = WordEmbedder()
    return memory


class Counted:
    """A Mem0 memory whose reads and writes are counted into a `Tally`."""

    def __init__(self, inner: Any, tally: Tally) -> None:
        self.inner = inner
        self.tally = tally

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.inner, name)
        if name not in _READS | _WRITES:
            return found

        def counted(*args: Any, **kwargs: Any) -> Any:
            if name in _READS:
                self.tally.reads += 1
            else:
                self.tally.writes += 1
            return found(*args, **kwargs)

        return counted


def _key(memory: Mapping[str, Any]) -> str | None:
    key = (memory.get("metadata") or {}).get("key")
    return str(key) if key is not None else None


class Mem0Backend:
    """Each agent adds, updates, deletes and reads through its own `ReadmitMemory`."""

    name = "mem0"

    def __init__(self, members: dict[str, Tracking]) -> None:
        from readmit.integrations.mem0 import ReadmitMemory

        self.tally = Tally()
        self.folder = tempfile.TemporaryDirectory(prefix="readmit-bench-mem0-")
        self.inner = bank(Path(self.folder.name))
        counted = Counted(self.inner, self.tally)
        self.members = members
        self.banks = {a: ReadmitMemory(counted, m, key=_key) for a, m in members.items()}
        self.paths = Paths()

    def put(self, event: Assert) -> None:
        draft = event.item
        self.members[event.author].pending = draft.id
        metadata: dict[str, Any] = {ANNOTATIONS: self._annotations(event.author, draft)}
        if draft.key is not None:
            metadata["key"] = draft.key
        result = self.banks[event.author].add(draft.text, **BANK, infer=False, metadata=metadata)
        self.paths.write(draft.id, str(result["results"][0]["id"]))

    def replace(self, event: Supersede) -> None:
        memory_id = self.paths.current(event.target)
        if memory_id is None:
            self.tally.gaps.append(f"supersede of {event.target}: its memory holds a later text")
            return
        self.members[event.author].pending = event.item.id
        metadata = {ANNOTATIONS: self._annotations(event.author, event.item)}
        self.banks[event.author].update(memory_id, text=event.item.text, metadata=metadata)
        self.paths.write(event.item.id, memory_id)

    def _annotations(self, author: str, draft: ItemDraft) -> dict[str, Any]:
        ids = self.members[author].ids
        premises: list[str | dict[str, Any]] = [
            {"memory": memory_id}
            if (memory_id := self.paths.current(p)) is not None
            else ids.of.get(p, p)
            for p in sorted(draft.depends_on)
        ]
        return annotations(draft, premises)

    def delete(self, event: Revoke) -> None:
        memory_id = self.paths.current(event.target)
        if memory_id is None:
            self.tally.gaps.append(f"revoke of {event.target}: its memory holds a later text")
            return
        self.banks[event.author].delete(memory_id)
        del self.paths.holds[memory_id]

    def read(self, agent: str) -> list[str]:
        top_k = max(1, len(self.paths.holds))
        found = self.banks[agent].get_all(filters=BANK, top_k=top_k)
        return [self.paths.holds[str(m["id"])] for m in found["results"]]

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()
        self.folder.cleanup()
