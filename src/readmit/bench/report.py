"""Aggregate benchmark rows and write them: JSON, a Markdown table and the plots (plots.py).

Aggregation follows the paper (appendix D.1): metrics are averaged over episodes
within a block (suite × condition × team size × method); a suite's Average
weights its conditions equally and its Pooled row by their episode counts, both
from unrounded condition scores. A metric that
could not be computed (no LLM endpoint for answer-level scores) is ``None`` and
shown as "n/c", never as zero.
"""

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from readmit.bench import metrics
from readmit.bench.plots import plots
from readmit.bench.runner import Row

VALID_DEPARTURE = {"propagated", "old_valid"}
"""Conditions whose departure state is still right: where RSR applies."""


def _block(rows: Sequence[Row]) -> dict[str, Any]:
    accuracy = [r.accuracy for r in rows if r.accuracy is not None]
    out: dict[str, Any] = {
        "episodes": len(rows),
        "failures": sum(r.outcome == "failed" for r in rows),
        "withheld": sum(r.outcome in ("blocked", "reset") for r in rows),
        "VIA": metrics.mean([r.via for r in rows]),
        "IIR": metrics.mean([r.iir for r in rows]),
        "Overall": metrics.mean(accuracy) if len(accuracy) == len(rows) else None,
        "verifier_calls": metrics.mean([float(r.verifier_calls) for r in rows]),
        "tokens": metrics.mean([float(r.tokens) for r in rows]),
        "answer_tokens": metrics.mean([float(r.answer_tokens) for r in rows]),
        "ms_per_return": 1000 * metrics.mean([r.seconds for r in rows]),
    }
    out["WSAR"] = metrics.wsar(out["IIR"])
    if rows and rows[0].condition in VALID_DEPARTURE and out["Overall"] is not None:
        out["RSR"] = metrics.rsr([True] * len(rows), [a == 1.0 for a in accuracy])
    if rows and all("P" in r.extra for r in rows):
        memora = metrics.memora_scores([r.extra for r in rows])
        out.update({f"admission_{k}": v for k, v in memora.items()})
    if rows and all("answer_P" in r.extra for r in rows):
        answered = [
            {k[len("answer_") :]: v for k, v in r.extra.items() if k.startswith("answer_")}
            for r in rows
        ]
        out.update({f"answer_{k}": v for k, v in metrics.memora_scores(answered).items()})
    if rows and all("SR" in r.extra for r in rows):
        stale = metrics.stale_scores(
            [r.extra["SR"] == 1 for r in rows],
            [r.extra["PR"] == 1 for r in rows],
            [r.extra["IPA"] == 1 for r in rows],
        )
        out.update({k: v for k, v in stale.items() if k in ("SR", "PR", "IPA", "LS")})
        out["answer_IIR"] = stale["IIR"]
    return out


_AGGREGATED = ("VIA", "IIR", "WSAR", "Overall", "ms_per_return", "verifier_calls")


def summarize(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """One entry per (suite, condition, team size, method), then Average and Pooled rows."""
    blocks: dict[tuple[str, str, int, str], list[Row]] = defaultdict(list)
    for row in rows:
        blocks[(row.suite, row.condition, row.team_size, row.method)].append(row)
    summary = [
        {"suite": s, "condition": c, "team_size": t, "method": m, **_block(b)}
        for (s, c, t, m), b in sorted(blocks.items())
    ]
    by_method: dict[tuple[str, int, str], list[dict[str, Any]]] = defaultdict(list)
    for entry in summary:
        by_method[(entry["suite"], entry["team_size"], entry["method"])].append(entry)
    for (suite, team, method), entries in sorted(by_method.items()):
        counts = {e["condition"]: float(e["episodes"]) for e in entries}
        # Average weights conditions equally; Pooled by their episode counts (appendix D.1).
        for label, weights in (("Average", None), ("Pooled", counts)):
            aggregate: dict[str, Any] = {
                "suite": suite,
                "condition": label,
                "team_size": team,
                "method": method,
                "episodes": sum(e["episodes"] for e in entries),
            }
            for name in (*_AGGREGATED, "tokens", "answer_tokens"):
                values = {e["condition"]: e[name] for e in entries}
                aggregate[name] = (
                    None if None in values.values() else metrics.weighted(values, weights)
                )
            summary.append(aggregate)
    return summary


def _pct(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/c"
    return f"{100 * value:.1f}"


def markdown(summary: Sequence[dict[str, Any]], notes: Sequence[str] = ()) -> str:
    """A Markdown report: one table per suite and team size."""
    lines = ["# readmit benchmark", ""]
    lines += [f"> {n}" for n in notes] + ([""] if notes else [])
    lines += [
        f"Scores are percentages averaged over episodes; the metrics are defined in "
        f"{metrics.DEFINED_IN} (after the TRACE paper's appendix D):",
        "",
        *(f"- **{name}**: {text}" for name, text in metrics.DEFINITIONS.items()),
        "",
    ]
    groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for entry in summary:
        groups[(entry["suite"], entry["team_size"])].append(entry)
    for (suite, team), entries in sorted(groups.items()):
        lines += [
            f"## {suite} (team of {team})",
            "",
            "| condition | method | VIA | IIR | WSAR | Overall | RSR | ms/return | "
            "verifier calls | LLM tokens (verifier + answer) | episodes |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for e in sorted(
            entries, key=lambda e: (e["condition"] in ("Average", "Pooled"), e["condition"])
        ):
            lines.append(
                f"| {e['condition']} | {e['method']} | {_pct(e['VIA'])} | {_pct(e['IIR'])} | "
                f"{_pct(e['WSAR'])} | {_pct(e['Overall'])} | {_pct(e.get('RSR'))} | "
                f"{e['ms_per_return']:.2f} | {e['verifier_calls']:.1f} | "
                f"{_tokens(e)} | {e['episodes']} |"
            )
        lines.append("")
    return "\n".join(lines)


def _tokens(entry: dict[str, Any]) -> str:
    verifier, answer = entry["tokens"], entry["answer_tokens"]
    if not verifier and not answer:
        return "0"
    return f"{verifier + answer:.0f} ({verifier:.0f} + {answer:.0f})"


def write(
    rows: Sequence[Row], out: Path, meta: dict[str, Any], notes: Sequence[str] = ()
) -> dict[str, Path]:
    """Write results.json, results.md and the plots into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(rows)
    paths = {"json": out / "results.json", "markdown": out / "results.md"}
    paths["json"].write_text(
        json.dumps(
            {
                "meta": meta,
                "notes": list(notes),
                "summary": summary,
                "rows": [asdict(r) for r in rows],
            },
            indent=1,
            default=str,
        ),
        encoding="utf-8",
    )
    paths["markdown"].write_text(markdown(summary, notes), encoding="utf-8")
    for path in plots(summary, out):
        paths[path.stem] = path
    return paths
