"""A LangGraph lens caught up by several threads while teammates write and withdraw.

Each thread reads the log and what the store says of it outside the lens's lock, and
applies it under the lock past what another thread applied. However the reads
interleave, the lens must end where one caught up once, in one thread, ends, and with
the walk the Mem0 and SDK layers keep (`Following`).
"""

import math
import random
import threading
from pathlib import Path

import pytest

from builders import KEY
from conftest import store_url
from readmit.admission.invalidation.judgment import Judgment
from readmit.errors import InvalidEvent
from readmit.events import Assert, ItemDraft
from readmit.integrations.following import Following
from readmit.integrations.langgraph.admitted import Lens
from readmit.integrations.langgraph.keys import identity, item_key
from readmit.integrations.team import Member
from readmit.model import Agent
from readmit.reasons import Exclusion, Reason, Stage
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, open_store

PATHS = [item_key(identity(("trip",), f"p{i}")) for i in range(8)]
STEPS = 60
"""Each writer's steps: counted, not timed, so a slow machine runs the same test."""


def _writes(url: str, agent: str, seed: int, ids: list[str]) -> None:
    """``STEPS`` keyed statements (some on an earlier item), revocations and verdicts."""
    rng, store = random.Random(seed), open_store(url)
    member = Member(store, "trip", agent, HmacSha256Signer(KEY))
    try:
        for k in range(STEPS):
            roll, known = rng.random(), list(ids)
            try:
                if roll < 0.6:
                    on = frozenset(rng.sample(known, 1)) if rng.random() < 0.4 else frozenset()
                    item = ItemDraft(
                        id=f"{agent}-{k}",
                        text=f"{agent} {k}.",
                        key=rng.choice(PATHS),
                        depends_on=on,
                    )
                    member.record(
                        [Assert(id=f"e-{item.id}", at=member.clock(), author=agent, item=item)]
                    )
                    ids.append(item.id)
                elif roll < 0.85:
                    member.revoke([rng.choice(known)], "void")
                else:
                    stale = Exclusion(
                        item=rng.choice(known), reason=Reason.IMPLICITLY_INVALIDATED,
                        stage=Stage.IMPLICIT, evidence=("e-s0",), detail="t: stale", confidence=1.0,
                    )  # fmt: skip
                    judgment = Judgment(verifier="t", confirmed=(stale,), at=member.clock())
                    store.remember_judgment("trip", "v", 1, judgment)
            except InvalidEvent:  # withdrawn meanwhile: the store refuses it, as it should
                continue
    finally:
        store.close()


@pytest.mark.parametrize("seed", [1, 2])
def test_a_lens_caught_up_by_four_threads_ends_as_one_caught_up_once(
    backend: str, tmp_path: Path, seed: int
) -> None:
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        assert isinstance(store, SqlStore)
        store.create_workspace(
            "trip", [Agent(id=a, principal="fam", role="planner") for a in ("r", "v", "w0", "w1")]
        )
        r = Member(store, "trip", "r", HmacSha256Signer(KEY))
        w0 = Member(store, "trip", "w0", HmacSha256Signer(KEY))
        for i, key in enumerate(PATHS[:4]):
            draft = ItemDraft(id=f"s{i}", text=f"Seed {i}.", key=key)
            w0.record([Assert(id=f"e-s{i}", at=w0.clock(), author="w0", item=draft)])
        r.depart()
        decided = r.return_()
        lens = Lens.of(decided)
        ids = [f"s{i}" for i in range(4)]
        writers = [
            threading.Thread(target=_writes, args=(url, a, seed * 10 + n, ids))
            for n, a in enumerate(("r", "w0", "w1"))
        ]
        done = threading.Event()
        failed: list[BaseException] = []

        def read() -> None:
            while not done.is_set():
                if lens.watch is not None:
                    lens.watch.due_at = -math.inf  # due at every read
                try:
                    lens.catch_up(r)
                except BaseException as error:  # reported below, in the test's thread
                    failed.append(error)
                    return

        readers = [threading.Thread(target=read) for _ in range(4)]
        for thread in [*writers, *readers]:
            thread.start()
        for thread in writers:
            thread.join()
        done.set()
        for thread in readers:
            thread.join()
        assert failed == []
        assert lens.watch is not None
        lens.watch.due_at = -math.inf
        lens.catch_up(r)
        once = Lens.of(decided)
        once.catch_up(r)
        walk = Following(decided)
        walk.withdrawn(r)

        assert (lens.visible, lens.current) == (once.visible, once.current)
        assert lens.following._out == once.following._out == walk._out
        assert len(store.events("trip")) > 4 + STEPS  # they wrote, and were followed
        store.close()
