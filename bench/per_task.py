"""Per-task figures of a ``readmit bench`` run over ManBench-Return: VIA, IIR and Overall for
each (task, condition, method), from its results.json (episode ids are manbench/TASK/K).

Usage: python bench/per_task.py OUT/results.json
"""

import json
import sys
from collections import defaultdict
from pathlib import Path
from statistics import fmean
from typing import Any


def main() -> None:
    rows: list[dict[str, Any]] = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))["rows"]
    blocks: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        task = row["episode"].split("/")[1]
        blocks[(task, row["condition"], row["method"])].append(row)
    print("| task | condition | method | VIA | IIR | Overall | episodes |")
    print("|---|---|---|---:|---:|---:|---:|")
    for (task, condition, method), block in sorted(blocks.items()):
        scored = [r["accuracy"] for r in block if r["accuracy"] is not None]
        overall = f"{100 * fmean(scored):.1f}" if len(scored) == len(block) else "n/c"
        print(
            f"| {task} | {condition} | {method} | {100 * fmean(r['via'] for r in block):.1f} "
            f"| {100 * fmean(r['iir'] for r in block):.1f} | {overall} | {len(block)} |"
        )


if __name__ == "__main__":
    main()
