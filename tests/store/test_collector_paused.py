"""Recording events and deciding a return run with the cyclic collector paused
(`readmit.collector`), and leave it as they found it."""

import gc
from datetime import datetime, timedelta

from builders import KEY, T0
from readmit.decide import decide
from readmit.events import Assert, ItemDraft, ReturnRequest
from readmit.model import Agent
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore

AGENTS = [Agent(id="A1", principal="p", role="ops"), Agent(id="A2", principal="p", role="dev")]


def test_an_append_and_a_return_run_with_the_collector_paused(store: WorkStateStore) -> None:
    seen: list[bool] = []

    def clock() -> datetime:
        seen.append(gc.isenabled())
        return T0 + timedelta(minutes=10)

    store.create_workspace("ws", AGENTS)
    gc.enable()
    store.append(
        "ws", [Assert(id="e1", at=T0, author="A2", item=ItemDraft(id="a", text="A fact."))]
    )
    store.depart("ws", "A1", T0 + timedelta(minutes=5))
    store.append(
        "ws",
        [Assert(id="e2", at=T0, author="A2", item=ItemDraft(id="b", text="B fact."))],
        clock=clock,
    )
    decided = decide(
        store,
        "ws",
        ReturnRequest(id="r", at=T0 + timedelta(hours=1), agent="A1", task="t", purpose="p"),
        policy=Policy(),
        verifier=None,
        signer=HmacSha256Signer(KEY),
        before_record=lambda: seen.append(gc.isenabled()),
    )

    assert decided.decision.outcome == "issued"
    assert seen == [False, False]
    assert gc.isenabled()
