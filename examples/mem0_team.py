"""Two agents with their own Mem0 banks; one deletes a fact while the other is away.

Offline: Qdrant in memory, a local bag-of-words embedder, ``infer=False`` adds (no
model calls), a readmit store in a temporary directory. Run: ``python examples/mem0_team.py``
(needs ``pip install '.[mem0]'`` in the readmit checkout).

The application code is plain Mem0 except for the construction line (marked) and
``depart()`` when an agent leaves.
"""

# ruff: noqa: T201  (an example prints what happened)

import atexit
import hashlib
import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

os.environ["MEM0_TELEMETRY"] = "False"  # before mem0 is imported: it reads this then
if "MEM0_DIR" not in os.environ:  # and its own files: in a folder removed at exit
    os.environ["MEM0_DIR"] = tempfile.mkdtemp(prefix="mem0-example-")
    atexit.register(shutil.rmtree, os.environ["MEM0_DIR"], True)

from mem0 import Memory
from mem0.configs.base import MemoryConfig
from mem0.embeddings.base import EmbeddingBase
from qdrant_client import QdrantClient

from readmit.integrations.mem0 import ReadmitMemory
from readmit.integrations.team import Member
from readmit.model import Agent
from readmit.signing import HmacSha256Signer
from readmit.store import open_store

# Mem0 announces the optional parts this example does without (spaCy, fastembed), and the
# local Qdrant that payload indexes do nothing there: quieted, so that the story reads plainly.
logging.getLogger("mem0").setLevel(logging.ERROR)
warnings.filterwarnings("ignore", "Payload indexes have no effect", UserWarning)


class WordEmbedder(EmbeddingBase):  # type: ignore[misc]
    """Deterministic, local: each word hashed to one of 256 axes."""

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        vector = [0.0] * 256
        for word in text.lower().split():
            vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % 256] += 1.0
        return vector


def offline_memory(directory: Path, name: str) -> Any:
    """A Mem0 ``Memory`` that makes no network call."""
    config = MemoryConfig(
        vector_store={
            "provider": "qdrant",
            "config": {
                "client": QdrantClient(location=":memory:"),
                "collection_name": name,
                "embedding_model_dims": 256,
            },
        },
        embedder={"provider": "openai", "config": {"api_key": "unused"}},
        llm={"provider": "openai", "config": {"api_key": "unused"}},
        history_db_path=str(directory / f"{name}-history.db"),
    )
    memory = Memory(config)
    memory.embedding_model = WordEmbedder()
    return memory


def topic(memory: Mapping[str, Any]) -> str | None:
    """The readmit key of a memory: its ``topic`` metadata (copies share it)."""
    value = (memory.get("metadata") or {}).get("topic")
    return None if value is None else str(value)


def main() -> None:
    """Run the two-agent story and print what each step did."""
    directory = Path(tempfile.mkdtemp(prefix="readmit-mem0-example-"))
    atexit.register(shutil.rmtree, directory, True)
    store = open_store(f"sqlite:///{directory}/readmit.db")
    store.create_workspace(
        "trip",
        [
            Agent(id="planner", principal="team", role="plan"),
            Agent(id="booker", principal="team", role="book"),
        ],
    )
    signer = HmacSha256Signer(b"example-signing-key-not-a-secret")
    planner = Member(store, "trip", "planner", signer)
    booker = Member(store, "trip", "booker", signer)

    # Plain Mem0 would be: memory = offline_memory(directory, "planner")
    planner_memory = ReadmitMemory(offline_memory(directory, "planner"), planner, key=topic)
    booker_memory = ReadmitMemory(offline_memory(directory, "booker"), booker, key=topic)

    fact = {"user_id": "trip", "infer": False, "metadata": {"topic": "hotel"}}
    added = planner_memory.add("The team hotel is the Hilton on 5th Avenue", **fact)
    booker_memory.add("The team hotel is the Hilton on 5th Avenue", **fact)
    print("Both agents remember: The team hotel is the Hilton on 5th Avenue")

    booker_memory.depart()
    print("booker departs.")

    planner_memory.delete(added["results"][0]["id"])
    print("planner deletes its hotel memory: the booking was cancelled.")

    result = booker_memory.search("team hotel", filters={"user_id": "trip"})
    readmit = result["readmit"]
    print(f"booker returns (decision {readmit['decision']}, {readmit['outcome']}).")
    print(f"booker's search finds: {[m['memory'] for m in result['results']]}")
    for removed in readmit["removed"]:
        print(f"  removed {removed['memory']!r}: {removed['reason']} ({removed['detail']})")
    store.close()


if __name__ == "__main__":
    main()
