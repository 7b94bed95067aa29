"""STALE (Type I) records → return episodes (spec §5, paper appendix D.4).

Record shape: ``{uid, M_old, M_new, explanation, type, probing_queries: {dim1_query,
dim2_query, dim3_query}, haystack_session: [50 sessions of [{role, content}]],
relevant_session_index: [old, new], timestamps: [50]}``.

The returning agent observes the sessions up to the one holding ``M_old`` and
departs; teammates observe the rest round-robin; it returns after the last one
and answers the three probes. ``M_old``, ``M_new``, ``explanation`` and
``relevant_session_index`` are for the evaluator only: they choose which items
count as the stale and the current state, and never reach a method.

A record that cannot make an episode is skipped and recorded in :class:`Stale`'s
``skipped`` with its file, its place and why; it never stops the run: a record that
is not an object or lacks a field, a ``relevant_session_index`` out of order, a
``uid`` that cannot name the episode's workspace (`Name`, at most `UID_CHARS`), and
a user turn whose text no item may carry (a control character). A user turn that
shows nothing (blank, only invisible characters) makes no item. A record JSON strict
reading refuses (a repeated key, a number of more than 100 characters, nesting too deep)
is skipped as malformed too. A file that is not JSON or not a list still stops the run.

Only Type I records make episodes (the paper's STALE setting); the others are left out,
each recorded in :class:`Stale`'s ``left_out`` with its place and type.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from readmit.bench.episode import Episode, Planned, Probe
from readmit.bench.history import History
from readmit.bench.loaders import json_rows
from readmit.bench.loaders.rows import Plan, SkippedRow, problem
from readmit.errors import InvalidInput
from readmit.terms import content_tokens
from readmit.wire.fields import Name, check_text, plain_name, says_nothing

ITEM_CHARS = 4000
"""How much of a user turn its item holds."""
UID_CHARS = 194
"""The longest ``uid``: the episode's workspace, ``stale-UID``, is a `Name` (200 at most)."""


class _Turn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str

    @field_validator("content")
    @classmethod
    def _storable(cls, value: str, info: ValidationInfo) -> str:
        """A user turn's text an item may carry (as far as an item takes it)."""
        if info.data.get("role") == "user" and value.strip():
            try:
                check_text(value[:ITEM_CHARS], "content")
            except InvalidInput as exc:
                raise ValueError(str(exc).removeprefix("content: ")) from None
        return value

    def text(self) -> str | None:
        """The text of its item: a user turn's that shows something, else ``None``."""
        text = self.content[:ITEM_CHARS]
        return text if self.role == "user" and not says_nothing(text) else None


class _Queries(BaseModel):
    dim1_query: str
    dim2_query: str
    dim3_query: str


class StaleRecord(BaseModel):
    """One STALE record, validated."""

    model_config = ConfigDict(extra="allow")
    uid: Name
    M_old: str
    M_new: str
    explanation: str
    type: str
    probing_queries: _Queries
    haystack_session: list[list[_Turn]] = Field(min_length=2)
    relevant_session_index: list[int] = Field(min_length=2, max_length=2)
    timestamps: list[str]

    @field_validator("uid")
    @classmethod
    def _names_a_workspace(cls, value: str) -> str:
        if len(value) > UID_CHARS:
            raise ValueError(f"at most {UID_CHARS} characters (it names the workspace stale-UID)")
        return value

    @model_validator(mode="after")
    def _in_order(self) -> Self:
        old, new = self.relevant_session_index
        if not 0 <= old < new < len(self.haystack_session):
            raise ValueError(
                f"relevant_session_index: out of order ([old, new] with 0 <= old < new < "
                f"{len(self.haystack_session)}, the sessions)"
            )
        return self


TYPE_I = ("i", "type i", "type_i", "1")
"""How a record's ``type`` says Type I (in any case)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Stale:
    """What :func:`load` read: the episodes, the records it skipped and those it left out."""

    episodes: list[Episode]
    skipped: tuple[SkippedRow, ...]
    left_out: tuple[SkippedRow, ...] = ()
    """Valid records not of Type I (only Type I records make episodes)."""


def read_records(path: Path) -> tuple[list[StaleRecord], list[SkippedRow]]:
    """The valid records of a STALE JSON file, and those skipped as malformed.

    Raises:
        InvalidInput: naming the file, if it cannot be read, is not JSON or not a list.
    """
    found, skipped = _read(path)
    return [record for _, record in found], skipped


def _read(path: Path) -> tuple[list[tuple[int, StaleRecord]], list[SkippedRow]]:
    """`read_records`, each valid record with its place in the file."""
    try:
        raw = json_rows.load(path.read_bytes(), ())
    except (OSError, InvalidInput) as exc:
        raise InvalidInput(f"cannot read STALE records from {path}: {exc}") from exc
    if not isinstance(raw, list):
        raise InvalidInput(f"{path}: a STALE file is a JSON list of records")
    records: list[tuple[int, StaleRecord]] = []
    skipped: list[SkippedRow] = []
    first: dict[str, int] = {}  # uid -> its first record: an episode's id is made of it
    for n, item in enumerate(raw):
        if isinstance(item, json_rows.Refused):
            skipped.append(SkippedRow(file=path, row=f"record {n}", reason=item.reason))
            continue
        try:
            record = StaleRecord.model_validate(item)
        except ValidationError as exc:
            skipped.append(SkippedRow(file=path, row=_record(n, item), reason=problem(exc)))
            continue
        if record.uid in first:
            why = f"uid: repeats record {first[record.uid]}'s (episodes would share its id)"
            skipped.append(SkippedRow(file=path, row=_record(n, item), reason=why))
            continue
        first[record.uid] = n
        records.append((n, record))
    return records, skipped


def _record(n: int, item: Any) -> str:
    """``record N``, with its ``uid`` where that is a plain name that fits."""
    uid = item.get("uid") if isinstance(item, dict) else None
    plain = isinstance(uid, str) and len(uid) <= UID_CHARS and plain_name(uid) is not None
    return f"record {n} (uid {uid})" if plain else f"record {n}"


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
        {"max_items": 256, "max_chars": 400_000, "max_item_chars": ITEM_CHARS},
    )
    by_session: dict[int, dict[str, str]] = {}
    for s, session in enumerate(record.haystack_session):
        author = "A0" if s <= old else f"T{1 + (s - old - 1) % team}"
        for t, turn in enumerate(session):
            text = turn.text()
            if text is None:
                continue
            item_id = f"s{s}-t{t}"
            h.item(author, item_id, text)
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


def load(path: Path, teams: Sequence[int] = (4,), limit: int | None = None) -> Stale:
    """Episodes of a STALE file's Type I records (the first ``limit``) for each team size.

    Malformed records are skipped and listed in the result (once, whatever the team sizes),
    and so are those left out for not being of Type I.

    Raises:
        InvalidInput: if the file cannot be read, is not JSON or not a list.
    """
    planned = plan(path, teams, limit)
    episodes = [p.build() for p in planned.episodes]
    return Stale(episodes=episodes, skipped=planned.skipped, left_out=planned.left_out)


def plan(path: Path, teams: Sequence[int] = (4,), limit: int | None = None) -> Plan[SkippedRow]:
    """`load`'s episodes, in its order, planned: the file read, no episode built.

    Raises:
        InvalidInput: as `load`.
    """
    records, skipped = _read(path)
    chosen = [r for _, r in records if r.type.lower() in TYPE_I][:limit]
    left_out = tuple(
        SkippedRow(
            file=path,
            row=_record(n, {"uid": r.uid}),
            reason=f"type: {r.type!r}, not Type I (STALE episodes are of Type I records only)",
        )
        for n, r in records
        if r.type.lower() not in TYPE_I
    )
    found = [
        Planned(
            id=f"stale/{r.uid}",
            suite="stale",
            condition=_bucket(r.relevant_session_index[0]),
            team_size=team,
            build=partial(episode, r, team),
        )
        for team in teams
        for r in chosen
    ]
    return Plan(episodes=found, skipped=tuple(skipped), left_out=left_out)


def episodes(path: Path, team: int = 4, limit: int | None = None) -> list[Episode]:
    """Episodes of a STALE file (Type I records), skipping malformed records.

    Use :func:`load` to learn which were skipped.
    """
    return load(path, (team,), limit).episodes
