"""Small constructors for domain values in tests (real values, real receipts)."""

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from readmit.admission.context import ReturnContext
from readmit.admission.invalidation.implicit import Later
from readmit.events import Assert, ItemDraft, Recorded, Revoke, Supersede, text_digest
from readmit.integrations.team import Member, new_id
from readmit.model import (
    Checkpoint,
    Item,
    Kind,
    Obligation,
    Receipt,
    Returner,
    Scope,
    Validity,
)
from readmit.report import upgrade_record
from readmit.store import WorkStateStore

T0 = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=2)


@dataclass
class Ticking:
    """A clock one second later at every call, that a test moves forward: no test sleeps."""

    at: datetime = T0

    def __call__(self) -> datetime:
        self.at += timedelta(seconds=1)
        return self.at


KEY = b"test-signing-key-0123456789"


def item(
    id: str,
    text: str = "",
    *,
    epoch: int = 1,
    author: str = "A2",
    kind: Kind = Kind.FACT,
    supports: tuple[str, ...] = (),
    depends_on: tuple[str, ...] = (),
    key: str | None = None,
    scope: Scope | None = None,
    validity: Validity | None = None,
    receipt: bool = True,
    cites: tuple[str, ...] = (),
    for_role: str | None = None,
) -> Item:
    text = text or f"Statement {id}."
    return Item(
        id=id,
        text=text,
        kind=kind,
        epoch=epoch,
        author=author,
        scope=scope or Scope(principals=frozenset({"family"})),
        validity=validity or Validity(),
        key=key,
        receipt=Receipt(
            event_id=f"ev-{id}", author=author, epoch=epoch, digest=text_digest(id, text)
        )
        if receipt
        else None,
        depends_on=frozenset(depends_on),
        supports=frozenset(supports),
        cites=frozenset(cites),
        for_role=for_role,
    )


def obligation(
    id: str,
    requires: tuple[str, ...],
    critical: tuple[str, ...] = (),
    role: str = "itinerary",
    epoch: int = 1,
) -> Obligation:
    return Obligation(
        id=id,
        role=role,
        requires=frozenset(requires),
        critical=frozenset(critical),
        item=item(id, f"Obligation {id}.", epoch=epoch, kind=Kind.OBLIGATION, for_role=role),
        frontier=item(
            f"f_{id}", f"Frontier of {id}.", epoch=epoch, kind=Kind.FRONTIER, for_role=role
        ),
    )


def returner(at: datetime = NOW, role: str = "itinerary", principal: str = "family") -> Returner:
    return Returner(
        agent="A1", principal=principal, role=role, task="trip", purpose="itinerary", at=at
    )


def context(
    items: tuple[Item, ...] = (),
    *,
    delta: tuple[Recorded, ...] = (),
    obligations: tuple[Obligation, ...] = (),
    who: Returner | None = None,
    evidence: frozenset[str] = frozenset(),
    departure_epoch: int = 1,
) -> ReturnContext:
    epochs = [i.epoch for i in items] + [r.epoch for r in delta] + [departure_epoch]
    return ReturnContext(
        workspace="ws",
        cycle="ws:A1:r1",
        returner=who or returner(),
        departure=Checkpoint(
            agent="A1", epoch=departure_epoch, at=T0, item_ids=(), digest="sha256:" + "0" * 64
        ),
        epoch=max(epochs),
        items=items,
        delta=delta,
        obligations=obligations,
        evidence=evidence,
    )


def revoke(target: str, epoch: int, why: str = "withdrawn") -> Recorded:
    return Recorded(
        epoch=epoch, event=Revoke(id=f"rv-{target}", at=T0, author="A2", target=target, why=why)
    )


def supersede(target: str, new: Item) -> Recorded:
    draft = ItemDraft(id=new.id, text=new.text, key=new.key, supports=new.supports)
    return Recorded(
        epoch=new.epoch,
        event=Supersede(id=f"ss-{target}", at=T0, author="A2", target=target, item=draft),
    )


def withdrawal(withdrawn: str, withdrawn_id: str = "w") -> Later:
    """A revocation (event e9, epoch 9) of the statement ``withdrawn``, as verifiers see it."""
    return Later(
        event_id="e9",
        epoch=9,
        op="revoke",
        text=f"No longer valid: {withdrawn}",
        withdrawn_id=withdrawn_id,
        withdrawn_text=withdrawn,
    )


def pair_row(
    n: int,
    later: str,
    kind: str,
    split: str | None = None,
    earlier: str = "Book physiotherapy with Ridgeback on Mondays.",
) -> dict[str, Any]:
    """Row ``n`` of a labeled pair file (`readmit.verifiers.pairs`): a later assert."""
    row: dict[str, Any] = {
        "id": f"p{n}",
        "domain": "test",
        "kind": kind,
        "invalidates": kind in ("premise_change", "withdrawn_reference"),
        "earlier": {"id": f"m{n}", "text": earlier},
        "later": {"event_id": f"e{n}", "op": "assert", "text": later},
    }
    return row if split is None else {**row, "split": split}


def build_note(agent: str, n: int) -> dict[str, Any]:
    """An ``assert`` event from ``agent``: its notes 3 apart share a key, so a later one
    replaces an earlier one every reader of the workspace holds."""
    return {
        "op": "assert",
        "author": agent,
        "item": {
            "id": f"{agent}-{n}",
            "text": f"Service {agent} runs build {n}.",
            "key": f"{agent}-k{n % 3}",
            "readers": {"principals": "*"},
        },
    }


def member_supersedes(member: Member, target: str, item: ItemDraft) -> None:
    event = Supersede(
        id=new_id("e"), at=member.clock(), author=member.agent, target=target, item=item
    )
    member.record([event])


def member_states(member: Member, item_id: str, text: str) -> None:
    item = ItemDraft(id=item_id, text=text)
    member.record([Assert(id=new_id("e"), at=member.clock(), author=member.agent, item=item)])


def logged(workspace: str = "ws", agent: str = "A1", **more: Any) -> dict[str, Any]:
    """The least decision record the store logs: the keys every readmit has logged."""
    empty: dict[str, Any] = {k: [] for k in ("items", "selected", "excluded", "hidden")}
    empty |= {"readmitted": [], "withheld": [], "coverage": {}, "view": None}
    at = {"at": "2026-05-01T08:00:00Z", "epoch": 0, "departure_epoch": 0}
    return {"workspace": workspace, "cycle": "c", "agent": agent, "outcome": "issued"} | (
        empty | at | more
    )


def spent(store: WorkStateStore, workspace: str, agent: str) -> dict[str, Any]:
    """The operator's judgment of ``agent``'s latest decision in ``workspace``: what it
    spent (calls, scans, pairs, tokens, seconds), which the agent's copy does not say.

    Read as ``readmit explain`` reads it, upgraded (`readmit.report.upgrade_record`): a
    record logged in an older shape reads in today's.
    """
    latest = store.decisions(workspace, agent)[-1]
    judgment: dict[str, Any] | None = upgrade_record(store.decision(latest.id, workspace))[
        "judgment"
    ]
    assert judgment is not None, "logged before readmit recorded the implicit stage's work"
    return judgment


def manbench_row(idx: int, **changes: Any) -> dict[str, Any]:
    """A row shaped like tests/data/manbench-sample (general_knowledge), with ``changes``.

    A change to ``...`` leaves that field out.
    """
    base: dict[str, Any] = {
        "idx": idx,
        "inputs": f"Question {idx}: how many legs do horses have?\n  choice: two\n  choice: four",
        "targets": ["four"],
        "multiple_choice_targets": ["two", "four"],
        "multiple_choice_scores": [0, 1],
        "split": "validation",
        "random_ans_idx": 1,
        "parsed_inputs": f"Question {idx}\n\nAnswer choices:\n(A) two\n(B) four",
        "misleading_target": "two",
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not ...}


def manbench_task(root: Path, task: str, rows: list[Any]) -> Path:
    """A ManBench task's file under ``root`` holding ``rows``."""
    path = root / task / "val_data.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"canary": "BENCHMARK DATA", "data": rows}), encoding="utf-8")
    return path
