"""Aggregate benchmark rows and write them: JSON, a Markdown table, PNG plots.

Aggregation follows the paper (appendix D.1): metrics are averaged over episodes
within a block (suite × condition × team size × method); a suite's Average
weights its conditions equally and its Pooled row by their episode counts, both
from unrounded condition scores. A metric that
could not be computed (no LLM endpoint for answer-level scores) is ``None`` and
shown as "n/c", never as zero.
"""

import json
import math
import textwrap
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from readmit.bench import metrics
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


PLANE_FILE = "admission-plane.png"
COST_FILE = "accuracy-cost.png"


def plots(summary: Sequence[dict[str, Any]], out: Path) -> list[Path]:
    """The admission plane and accuracy against cost, as PNG files in ``out``.

    Both plot each method's Average over a suite's conditions (one panel per suite and
    team size); the per-condition scores are in the tables. The cost plot leaves out
    suites whose answer accuracy was not computed.
    """
    import matplotlib

    matplotlib.use("Agg")
    written = [_save(admission_figure(summary), out / PLANE_FILE)]
    cost = cost_figure(summary)
    if cost is not None:
        written.append(_save(cost, out / COST_FILE))
    return written


_LIMITS = (-8.0, 108.0)
"""Axis limits around the 0–100 scale, so a marker at 0 or 100 is drawn whole."""
_GOOD_FROM = 90.0
"""The shaded good corner of the admission plane starts here on both axes."""


def _panels(summary: Sequence[dict[str, Any]]) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """Each (suite, team size)'s Average rows, one per method, sorted by method."""
    panels: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for entry in sorted(summary, key=lambda e: e["method"]):
        if entry["condition"] == "Average":
            panels[(entry["suite"], entry["team_size"])].append(entry)
    return dict(sorted(panels.items()))


def _grid(keys: Sequence[tuple[str, int]]) -> tuple[Any, dict[tuple[str, int], Any]]:
    """A figure with one panel per (suite, team size): suites across, team sizes down."""
    import matplotlib.pyplot as plt

    suites = sorted({s for s, _ in keys})
    teams = sorted({t for _, t in keys})
    fig, axes = plt.subplots(
        len(teams),
        len(suites),
        figsize=(4.6 * len(suites) + 0.4, 3.9 * len(teams) + 0.9),
        squeeze=False,
    )
    placed = {(s, t): axes[teams.index(t)][suites.index(s)] for s, t in keys}
    for row in axes:
        for ax in row:
            if ax not in placed.values():
                ax.set_visible(False)  # a suite not run at this team size
    return fig, placed


def admission_figure(summary: Sequence[dict[str, Any]]) -> Any:
    """VIA against IIR, a panel per suite: methods that tie share one labeled marker.

    Every marker is at its exact score, inside the 0–100 square; the methods at one
    point are named in one label, placed where it overlaps no other label or marker.
    """
    panels = _panels(summary)
    fig, axes = _grid(list(panels))
    for (suite, team), entries in panels.items():
        _plane(axes[(suite, team)], suite, team, entries)
    fig.suptitle(
        "Admission plane: each method's average over the suite's conditions "
        "(per-condition scores in results.md)\n"
        "Green corner = good: every still-valid item kept (VIA) and every stale item "
        "kept out (IIR). Methods at the same point share one marker.",
        fontsize=10,
    )
    fig.tight_layout()
    fig.canvas.draw()  # label placement measures text on the final layout
    for ax in axes.values():
        _place_labels(ax)
    return fig


def _plane(ax: Any, suite: str, team: int, entries: Sequence[dict[str, Any]]) -> None:
    ties: dict[tuple[float, float], list[str]] = defaultdict(list)
    for e in entries:
        ties[(round(100 * e["VIA"], 1), round(100 * e["IIR"], 1))].append(e["method"])
    _good_corner(ax)
    for n, ((x, y), methods) in enumerate(ties.items()):
        color = _GROUP_COLORS[n % len(_GROUP_COLORS)]
        ax.scatter([x], [y], s=45, color=color, zorder=3)
        leader = {"arrowstyle": "-", "color": color, "linewidth": 0.8, "shrinkB": 4}
        label = textwrap.fill(", ".join(methods), width=26)
        ax.annotate(label, (x, y), color=color, arrowprops=leader, **_LABEL_STYLE)
    ax.set(
        xlim=_LIMITS,
        ylim=_LIMITS,
        xticks=range(0, 101, 20),
        yticks=range(0, 101, 20),
        xlabel="VIA: valid state kept (%), higher is better",
        ylabel="IIR: stale state kept out (%), higher is better",
        title=f"{suite} (team of {team})",
    )
    ax.set_box_aspect(1)
    ax.grid(alpha=0.3)


def _good_corner(ax: Any) -> None:
    """Shade the corner where VIA and IIR are both high, and label it."""
    from matplotlib.patches import Rectangle

    side = _LIMITS[1] - _GOOD_FROM
    ax.add_patch(Rectangle((_GOOD_FROM, _GOOD_FROM), side, side, color="tab:green", alpha=0.15))
    ax.text(
        _LIMITS[1] - 1, _GOOD_FROM + 1, "good", ha="right", va="bottom", fontsize=7,
        color="darkgreen", fontweight="bold",
    )  # fmt: skip


_GROUP_COLORS = ("C0", "C1", "C4", "C5", "C3", "C9", "C8", "C7", "C6", "black")
"""One color per marker and its label (tab10 without its green, kept for the good corner)."""

_LABEL_STYLE: dict[str, Any] = {
    "xytext": (0, 0),
    "textcoords": "offset points",
    "fontsize": 7,
    "gid": "tie-label",
    "bbox": {"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.85},
    "zorder": 4,
}

_DIRECTIONS = (
    (-1, -1, "right", "top"),
    (1, 1, "left", "bottom"),
    (1, -1, "left", "top"),
    (-1, 1, "right", "bottom"),
    (0, -1, "center", "top"),
    (0, 1, "center", "bottom"),
    (-1, 0, "right", "center"),
    (1, 0, "left", "center"),
)
_SPOTS = tuple(
    ((dx * distance, dy * distance), ha, va)
    for distance in (10, 30)
    for dx, dy, ha, va in _DIRECTIONS
)
"""Where a label may sit around its marker (offset in points, alignment), in order of
preference: near first, then farther out (the leader line still joins them)."""


def _place_labels(ax: Any) -> None:
    """Move each tie label to the first spot inside ``ax`` that overlaps nothing placed."""
    from matplotlib.text import Text

    renderer = ax.figure.canvas.get_renderer()
    labels = [t for t in ax.texts if t.get_gid() == "tie-label"]
    taken = [_marker_box(ax, label.xy) for label in labels]
    taken += [t.get_window_extent(renderer) for t in ax.texts if t not in labels]
    for label in labels:
        fits = []
        for offset, ha, va in _SPOTS:
            label.set(position=offset, ha=ha, va=va)
            box = Text.get_window_extent(label, renderer)  # the text, not its leader line
            if _contains(ax.bbox, box):
                fits.append((offset, ha, va, box))
                if not any(box.overlaps(other) for other in taken):
                    break
        else:  # nothing fits without overlap: keep the first spot inside the panel
            fits = fits[:1]
        if fits:
            offset, ha, va, box = fits[-1]
            label.set(position=offset, ha=ha, va=va)
            taken.append(box)


def _marker_box(ax: Any, xy: tuple[float, float]) -> Any:
    from matplotlib.transforms import Bbox

    x, y = ax.transData.transform(xy)
    r = 5 * ax.figure.dpi / 72
    return Bbox.from_extents(x - r, y - r, x + r, y + r)


def _contains(outer: Any, inner: Any) -> bool:
    return bool(
        outer.x0 <= inner.x0
        and inner.x1 <= outer.x1
        and outer.y0 <= inner.y0
        and inner.y1 <= outer.y1
    )


_MARKERS = "osD^v<>phX*P"


def cost_figure(summary: Sequence[dict[str, Any]]) -> Any | None:
    """Answer accuracy against admission time, a panel per suite that has answer scores.

    ``None`` when no suite has them. The legend lists only methods that have a marker.
    """
    import matplotlib.pyplot as plt

    panels = {
        key: scored
        for key, entries in _panels(summary).items()
        if (scored := [e for e in entries if e["Overall"] is not None])
    }
    if not panels:
        return None
    methods = sorted({e["method"] for entries in panels.values() for e in entries})
    cmap = plt.get_cmap("tab10")
    style = {m: (_MARKERS[n % len(_MARKERS)], cmap(n % 10)) for n, m in enumerate(methods)}
    fig, axes = _grid(list(panels))
    for (suite, team), entries in panels.items():
        ax = axes[(suite, team)]
        for e in entries:
            marker, color = style[e["method"]]
            ax.scatter(  # hollow, so that markers at nearly the same point stay visible
                [max(e["ms_per_return"], 1e-3)],
                [100 * e["Overall"]],
                marker=marker,
                facecolors="none",
                edgecolors=[color],
                linewidths=1.5,
                s=60,
                label=e["method"],
            )
        ax.set(
            xscale="log",
            ylim=_LIMITS,
            yticks=range(0, 101, 20),
            xlabel="admission time per return (ms, log scale)",
            ylabel="Overall: answers right (%)",
            title=f"{suite} (team of {team})",
        )
        ax.set_box_aspect(1)
        ax.grid(alpha=0.3)
    shown: dict[str, Any] = {}
    for ax in axes.values():
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            shown.setdefault(label, handle)
    fig.suptitle(
        "Accuracy against cost: each method's average over the suite's conditions\n"
        "Top left is best: answers right, decided fast. Suites without answer scores "
        "are left out.",
        fontsize=10,
    )
    fig.tight_layout()
    fig.legend(
        shown.values(), shown.keys(), loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8
    )
    return fig


def _save(fig: Any, path: Path) -> Path:
    """Write ``path`` and free the figure."""
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


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
