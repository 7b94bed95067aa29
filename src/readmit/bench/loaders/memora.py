"""Memora persona directories → return episodes at 25/50/75% departure (appendix D.3).

The agent sees conversation messages only. ``operation``, ``operation_details``,
``share_memory``, ``memory_evidence``, ``forgetting_evidence`` and ``evaluation``
are evaluator-only: here they only decide which recorded items count as the
memories a question needs present (C^P) and absent (C^F). Offline, presence and
forgetting are scored at admission (is the item that carried the memory in the
method's context?); answer-level judging needs an LLM.
"""

from pathlib import Path
from typing import Any

from readmit import strict_json
from readmit.bench.episode import Episode, Probe
from readmit.bench.history import History
from readmit.errors import InvalidInput

FRACTIONS = (0.25, 0.5, 0.75)


def _load(path: Path) -> Any:
    try:
        return strict_json.loads(path.read_bytes())
    except (OSError, InvalidInput) as exc:
        raise InvalidInput(f"cannot read Memora file {path}: {exc}") from exc


def _criteria(entries: list[dict[str, Any]], carriers: dict[int, list[str]]) -> list[str]:
    """The items that carried each evidence entry's memory (entries in missing sessions drop)."""
    found = []
    for entry in entries:
        session = entry.get("session_id")
        found += carriers.get(session, []) if isinstance(session, int) else []
    return found


def episodes(persona_dir: Path, team: int = 4) -> list[Episode]:
    """One episode per (departure fraction, question) of a persona directory.

    Raises:
        InvalidInput: if the directory has no sessions or no evaluation file.
    """
    sessions = [_load(p) for p in sorted((persona_dir / "conversations").glob("session_*.json"))]
    evaluation = sorted(persona_dir.glob("evaluation_questions_*.json"))
    if not sessions or not evaluation:
        raise InvalidInput(
            f"{persona_dir}: expected conversations/session_*.json and "
            "evaluation_questions_<persona>.json"
        )
    questions = [q for group in _load(evaluation[0])["questions"].values() for q in group]
    found = []
    for fraction in FRACTIONS:
        history, carriers = _history(persona_dir.name, sessions, fraction, team)
        for q in questions:
            presence = _criteria(
                q.get("memory_evidence", {}).get("remaining_tasks", [])
                or _evidence_entries(q.get("memory_evidence")),
                carriers,
            )
            forgetting = _criteria(_evidence_entries(q.get("forgetting_evidence")), carriers)
            found.append(
                Episode(
                    id=f"memora/{persona_dir.name}/{int(fraction * 100)}/{q['question_id']}",
                    suite="memora",
                    condition=f"{int(fraction * 100)}%",
                    scenario=history,
                    returner="A0",
                    task="assist",
                    purpose="assist",
                    valid=frozenset(presence),
                    invalid=frozenset(forgetting),
                    probes=(Probe(id=q["question_id"], question=q["question"], answer=""),),
                    team_size=team,
                    retrieve=24,
                    judge={
                        "presence": presence,
                        "forgetting": forgetting,
                        "criteria": q.get("evaluation", {}).get("evaluation_questions", []),
                    },
                )
            )
    return found


def _evidence_entries(evidence: Any) -> list[dict[str, Any]]:
    if not isinstance(evidence, dict):
        return []
    return [e for v in evidence.values() if isinstance(v, list) for e in v if isinstance(e, dict)]


def _history(
    persona: str, sessions: list[dict[str, Any]], fraction: float, team: int
) -> tuple[dict[str, Any], dict[int, list[str]]]:
    cut = max(1, round(len(sessions) * fraction))
    agents = [
        ("A0", persona, "assistant"),
        *((f"T{n}", persona, "assistant") for n in range(1, team + 1)),
    ]
    h = History(
        f"memora-{persona}-{int(fraction * 100)}",
        agents,
        {"max_items": 100_000, "max_chars": 10_000_000, "max_item_chars": 8000},
    )
    carriers: dict[int, list[str]] = {}
    for n, session in enumerate(sessions):
        author = "A0" if n < cut else f"T{1 + (n - cut) % team}"
        sid = session["session_id"]
        for turn in session["conversation"]:
            if turn["speaker"] == "ai_agent" or not turn["message"].strip():
                continue
            item_id = f"s{sid}-t{turn['turn']}"
            h.item(author, item_id, turn["message"][:8000])
            if turn.get("share_memory"):  # evaluator-only: maps criteria to items
                carriers.setdefault(sid, []).append(item_id)
        if n == cut - 1:
            h.add("depart", agent="A0")
    return h.scenario(), carriers
