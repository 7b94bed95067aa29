"""STALE (Type I) records → return episodes (spec §5, paper appendix D.4).

Record shape: ``{uid, M_old, M_new, explanation, type, probing_queries: {dim1_query,
dim2_query, dim3_query}, haystack_session: [50 sessions of [{role, content}]],
relevant_session_index: [old, new], timestamps: [50]}``.

The returning agent observes the sessions up to the one holding ``M_old`` and
departs; teammates observe the rest round-robin; it returns after the last one
and answers the three probes. ``M_old``, ``M_new``, ``explanation`` and
``relevant_session_index`` are for the evaluator only: they choose which items
count as the stale and the current state, and never reach a method.
"""

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from readmit import strict_json
from readmit.bench.episode import Episode, Probe
from readmit.bench.history import History
from readmit.errors import InvalidInput
from readmit.terms import content_tokens


class _Turn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str


class _Queries(BaseModel):
    dim1_query: str
    dim2_query: str
    dim3_query: str


class StaleRecord(BaseModel):
    """One STALE record, validated."""

    model_config = ConfigDict(extra="allow")
    uid: str
    M_old: str
    M_new: str
    explanation: str
    type: str
    probing_queries: _Queries
    haystack_session: list[list[_Turn]] = Field(min_length=2)
    relevant_session_index: list[int] = Field(min_length=2, max_length=2)
    timestamps: list[str]


def read_records(path: Path) -> list[StaleRecord]:
    """Read and validate a STALE JSON file.

    Raises:
        InvalidInput: naming the record and field at fault.
    """
    try:
        raw = strict_json.loads(path.read_bytes())
    except (OSError, InvalidInput) as exc:
        raise InvalidInput(f"cannot read STALE records from {path}: {exc}") from exc
    if not isinstance(raw, list):
        raise InvalidInput(f"{path}: a STALE file is a JSON list of records")
    records = []
    for n, item in enumerate(raw):
        try:
            record = StaleRecord.model_validate(item)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            raise InvalidInput(f"{path}: record {n}: {where}: {first['msg']}") from None
        old, new = record.relevant_session_index
        if not 0 <= old < new < len(record.haystack_session):
            raise InvalidInput(f"{path}: record {record.uid}: relevant_session_index out of order")
        records.append(record)
    return records


def _closest(items: dict[str, str], text: str) -> str | None:
    words = content_tokens(text)
    scored = [(len(content_tokens(t) & words), i) for i, t in items.items()]
    best = max(scored, default=(0, ""))
    return best[1] if best[0] > 0 else None


def episode(record: StaleRecord, team: int = 4) -> Episode:
    """The return episode of one record."""
    old, new = record.relevant_session_index
    agents = [
        ("A0", "user", "assistant"),
        *((f"T{n}", "user", "assistant") for n in range(1, team + 1)),
    ]
    h = History(
        f"stale-{record.uid}",
        agents,
        {"max_items": 256, "max_chars": 400_000, "max_item_chars": 4000},
    )
    by_session: dict[int, dict[str, str]] = {}
    for s, session in enumerate(record.haystack_session):
        author = "A0" if s <= old else f"T{1 + (s - old - 1) % team}"
        for t, turn in enumerate(session):
            if turn.role != "user" or not turn.content.strip():
                continue
            item_id = f"s{s}-t{t}"
            h.item(author, item_id, turn.content[:4000])
            by_session.setdefault(s, {})[item_id] = turn.content
        if s == old:
            h.add("depart", agent="A0")
    stale = _closest(by_session.get(old, {}), record.M_old)
    current = _closest(by_session.get(new, {}), record.M_new)
    q = record.probing_queries
    probes = tuple(
        Probe(id=d, question=text, answer="")
        for d, text in (("dim1", q.dim1_query), ("dim2", q.dim2_query), ("dim3", q.dim3_query))
    )
    judge: dict[str, Any] = {
        "M_old": record.M_old,
        "M_new": record.M_new,
        "explanation": record.explanation,
    }
    return Episode(
        id=f"stale/{record.uid}",
        suite="stale",
        condition=_bucket(old),
        scenario=h.scenario(),
        returner="A0",
        task="chat",
        purpose="chat",
        valid=frozenset({current} if current else set()),
        invalid=frozenset({stale} if stale else set()),
        probes=probes,
        team_size=team,
        judge=judge,
        retrieve=16,
    )


def _bucket(departure: int) -> str:
    """The paper's departure strata (Table 4): early 0-4, middle 5-9, late 10-14 and later."""
    return "early" if departure <= 4 else "middle" if departure <= 9 else "late"


def episodes(path: Path, team: int = 4, limit: int | None = None) -> list[Episode]:
    """Episodes of a STALE file (Type I records)."""
    records = [r for r in read_records(path) if r.type.lower() in ("i", "type i", "type_i", "1")]
    return [episode(r, team) for r in records[:limit]]
