"""results.json and results.md of a portability run: VIA/IIR and cost per backend side by side."""

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from statistics import median
from typing import Any

from readmit.bench import metrics
from readmit.bench.backends.study import Played


def _pct(value: float) -> str:
    return "n/a" if value != value else f"{100 * value:.1f}"


def agreement(played: Sequence[Played], baseline: str = "readmit") -> dict[str, float]:
    """Per backend: the share of episodes whose VIA and IIR both equal the baseline's.

    Not a number without the baseline (``--backend langgraph`` alone ended the run with
    ``internal: KeyError``).
    """
    base = {p.episode: (p.via, p.iir) for p in played if p.backend == baseline}
    shares: dict[str, float] = {}
    for name in dict.fromkeys(p.backend for p in played):
        same = [
            float((p.via, p.iir) == base[p.episode])
            for p in played
            if p.backend == name and p.episode in base
        ]
        shares[name] = metrics.mean(same) if same else float("nan")
    return shares


def blocks(played: Sequence[Played]) -> list[dict[str, Any]]:
    """One row per (suite, condition, team size, backend): episodes, VIA, IIR, outcomes."""
    groups: dict[tuple[str, str, int, str], list[Played]] = {}
    for p in played:
        groups.setdefault((p.suite, p.condition, p.team_size, p.backend), []).append(p)
    return [
        {
            "suite": suite,
            "condition": condition,
            "team": team,
            "backend": backend,
            "episodes": len(rows),
            "VIA": metrics.mean([r.via for r in rows]),
            "IIR": metrics.mean([r.iir for r in rows]),
            "issued": sum(r.outcome == "issued" for r in rows),
        }
        for (suite, condition, team, backend), rows in groups.items()
    ]


def costs(played: Sequence[Played]) -> list[dict[str, Any]]:
    """Per backend: wall time per return, backend reads and writes per episode, gaps, failures."""
    rows = []
    for name in dict.fromkeys(p.backend for p in played):
        mine = [p for p in played if p.backend == name]
        ok = [p for p in mine if p.error is None]
        seconds = [p.seconds for p in ok]
        rows.append(
            {
                "backend": name,
                "episodes": len(mine),
                "ms_per_return_mean": 1000 * metrics.mean(seconds),
                "ms_per_return_median": 1000 * median(seconds) if seconds else float("nan"),
                "reads_per_episode": metrics.mean([float(p.reads) for p in ok]),
                "writes_per_episode": metrics.mean([float(p.writes) for p in ok]),
                "episodes_with_gaps": sum(bool(p.gaps) for p in mine),
                "failed": len(mine) - len(ok),
            }
        )
    return rows


def markdown(played: Sequence[Played], meta: dict[str, Any], notes: Sequence[str] = ()) -> str:
    """The report: ``notes`` (the data rows skipped), VIA/IIR per block, agreement, then cost."""
    names = list(dict.fromkeys(p.backend for p in played))
    by = {(b["suite"], b["condition"], b["team"], b["backend"]): b for b in blocks(played)}
    keys = list(dict.fromkeys(k[:3] for k in by))
    head = " | ".join(f"{n} VIA | {n} IIR" for n in names)
    lines = [
        "# readmit bench: portability (TRACE through each backend)",
        "",
        *(line for note in notes for line in (f"> {note}", "")),
        f"Backends: {', '.join(names)}; episodes: {len({p.episode for p in played})}; "
        f"verifier: {meta.get('verifier')}. VIA and IIR are percentages of episodes "
        f"({metrics.DEFINED_IN}).",
        "",
        f"| suite | condition | team | n | {head} |",
        "|" + " --- |" * 3 + " ---: |" + " ---: |" * (2 * len(names)),
    ]
    for suite, condition, team in keys:
        cells = []
        for n in names:
            b = by.get((suite, condition, team, n))
            cells += [_pct(b["VIA"]), _pct(b["IIR"])] if b else ["", ""]
        count = max(
            by[(suite, condition, team, n)]["episodes"]
            for n in names
            if (suite, condition, team, n) in by
        )
        lines.append(f"| {suite} | {condition} | {team} | {count} | " + " | ".join(cells) + " |")
    shares = agreement(played)
    lines += [
        "",
        "Episodes whose VIA and IIR both equal readmit's own store's: "
        + ", ".join(f"{n} {_pct(shares[n])}%" for n in names)
        + ".",
        "",
        "| backend | episodes | ms/return (mean) | ms/return (median) | backend reads/episode "
        "| backend writes/episode | episodes with gaps | failed |",
        "| --- |" + " ---: |" * 7,
    ]
    for c in costs(played):
        lines.append(
            f"| {c['backend']} | {c['episodes']} | {c['ms_per_return_mean']:.1f} | "
            f"{c['ms_per_return_median']:.1f} | {c['reads_per_episode']:.1f} | "
            f"{c['writes_per_episode']:.1f} | {c['episodes_with_gaps']} | {c['failed']} |"
        )
    lines += [
        "",
        "ms/return: the return decision plus the reads through the backend. Backend reads "
        "and writes: calls on the backend's own API over the episode (readmit: one append "
        "per item event and the decision's read of C; LangGraph: ops sent to the inner "
        "store; Mem0: add/update/delete and get/get_all/search/history on the inner "
        "Memory). Gaps: history events the backend could not express; see results.json.",
    ]
    return "\n".join(lines) + "\n"


def write(
    played: Sequence[Played], out: Path, meta: dict[str, Any], notes: Sequence[str] = ()
) -> dict[str, Path]:
    """Write results.json (meta, notes, blocks, costs, agreement, every episode) and results.md.

    ``notes`` head results.md too, as the methods' report does (the data rows skipped).
    """
    document = {
        "meta": meta,
        "notes": list(notes),
        "blocks": blocks(played),
        "costs": costs(played),
        "agreement": agreement(played),
        "episodes": [asdict(p) for p in played],
    }
    text = json.dumps(_finite(document), indent=2, allow_nan=False)
    paths = {"json": out / "results.json", "markdown": out / "results.md"}
    paths["json"].write_text(text + "\n", encoding="utf-8")
    paths["markdown"].write_text(markdown(played, meta, notes), encoding="utf-8")
    return paths


def failures(played: Sequence[Played]) -> str | None:
    """How many runs failed (scored 0), and the first with its error; ``None`` if none did."""
    failed = [p for p in played if p.error is not None]
    if not failed:
        return None
    first = failed[0]
    where = f"{first.backend} {first.episode}"
    return f"{len(failed)} runs failed (scored 0), first: {where}: {first.error}"


def _finite(value: Any) -> Any:
    """``value`` with every NaN (a block with no score) as null, so the JSON is standard."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value
