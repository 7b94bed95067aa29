"""Where a ManBench suite's task files are (each ``val_data.json`` under it), and their tasks.

Task files are found at any depth under the suite's folder. A task is named by its
folder's name, or by that folder's path under the suite's folder where two tasks share a
name, so they make distinct episodes.
"""

import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from readmit.errors import InvalidInput

TASK_FILE = "val_data.json"


def task_files(root: Path) -> list[Path]:
    """Every ``val_data.json`` under ``root``, at any depth, in path order.

    A file of that name is listed whatever it is (a dangling or looping link, a folder):
    reading it says what is wrong, naming it. Linked folders are followed, each real one once.

    Raises:
        InvalidInput: if ``root`` is no folder, or naming a folder that cannot be listed.
    """
    if not root.is_dir():
        raise InvalidInput(f"no ManBench task files (*/{TASK_FILE}) under {root}")
    found: list[Path] = []
    seen: set[Path] = set()
    folders = [root]
    while folders:
        folder = folders.pop()
        if folder.resolve() in seen:
            continue
        seen.add(folder.resolve())
        for path, is_file in _listed(folder):
            (found if is_file else folders).append(path)
    return sorted(found)


def _listed(folder: Path) -> list[tuple[Path, bool]]:
    """The task files (``True``) and the folders (``False``) in ``folder``.

    Raises:
        InvalidInput: naming the folder, or an entry, that cannot be read.
    """
    listed: list[tuple[Path, bool]] = []
    where = folder
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                where = Path(entry.path)
                if entry.name == TASK_FILE or entry.is_dir():  # is_dir: ELOOP raises
                    listed.append((where, entry.name == TASK_FILE))
    except OSError as exc:
        raise InvalidInput(f"cannot read {where}: {exc.strerror or exc}") from exc
    return listed


def task_names(root: Path, files: Sequence[Path]) -> dict[Path, str]:
    """The task of each file: its folder's name, or its folder's path under ``root``.

    The path (with ``/``) where two tasks share a name; a file in ``root`` is of ``root``'s
    resolved name.
    """
    named = {p: (p.parent if p.parent != root else root.resolve()).name for p in files}
    counts = Counter(named.values())
    shared = {n for n, count in counts.items() if count > 1}
    return {
        p: p.parent.relative_to(root).as_posix() if n in shared else n for p, n in named.items()
    }
