"""``readmit init FILE``: a starter scenario to edit, and a guide that explains each event.

JSON carries no comments, and a scenario file is strict (an unknown field is an
error), so the explanation lives beside it: ``FILE`` holds the scenario and the
Markdown file with the same stem (``start.json`` → ``start.md``) explains it
event by event, by number. Both replay as they are.
"""

import json
import os
from pathlib import Path
from shlex import quote
from typing import Any

import click

from readmit.errors import InvalidInput
from readmit.wire.fields import check_name


def _at(day: int, hour: int, minute: int = 0) -> str:
    return f"2026-06-{day:02d}T{hour:02d}:{minute:02d}:00Z"


def starter(workspace: str = "starter") -> tuple[dict[str, Any], list[str]]:
    """The starter scenario of ``workspace`` and one explanation per event, in order."""
    events: list[tuple[dict[str, Any], str]] = [
        (
            {
                "at": _at(1, 9),
                "author": "ops",
                "op": "assert",
                "item": {
                    "id": "build",
                    "key": "release-build",
                    "supports": ["d_build"],
                    "text": "Release build 1.4.0 passed CI.",
                },
            },
            "`ops` asserts a fact. `key` names the thing it describes (a later item with the "
            "same key replaces it); `supports` lists the requirement labels it provides "
            "(here `d_build`, which the obligation below needs).",
        ),
        (
            {
                "at": _at(1, 9, 5),
                "author": "dev",
                "op": "assert",
                "item": {
                    "id": "notes",
                    "kind": "constraint",
                    "supports": ["d_notes"],
                    "text": "Release notes for 1.4.0 are approved.",
                },
            },
            "`dev` asserts a constraint that supports `d_notes`.",
        ),
        (
            {
                "at": _at(1, 9, 10),
                "author": "dev",
                "op": "obligation",
                "obligation": {
                    "id": "ship",
                    "role": "release",
                    "text": "Ship version 1.4.",
                    "requires": ["d_build", "d_notes"],
                    "critical": ["d_build"],
                    "frontier": {"id": "ship-next", "text": "Ship: tag and publish the build."},
                },
            },
            "An obligation for the `release` role: whoever returns in that role must be "
            "able to continue it. It `requires` both labels, `d_build` is `critical`, and "
            "its `frontier` says what is left to do.",
        ),
        (
            {
                "at": _at(1, 9, 15),
                "op": "experience",
                "agent": "dev",
                "experience": {
                    "id": "tip",
                    "source": "build",
                    "text": "The 1.4.0 build needs the slow integration tests rerun.",
                },
            },
            "A private memory of `dev`, bound to the item it was learned from (`source`). "
            "It comes back at a return only if `build` is in the issued view.",
        ),
        (
            {"at": _at(1, 10), "op": "depart", "agent": "dev"},
            "`dev` departs: readmit checkpoints what it can see now.",
        ),
        (
            {
                "at": _at(2, 9),
                "author": "ops",
                "op": "assert",
                "item": {
                    "id": "build2",
                    "key": "release-build",
                    "supports": ["d_build"],
                    "text": "Release build 1.4.1 (security fix) passed CI; 1.4.0 is withdrawn.",
                },
            },
            "While `dev` is away, `ops` replaces the build: same `key`, so `build` becomes "
            "`stale_or_superseded`.",
        ),
        (
            {
                "at": _at(2, 9, 30),
                "author": "ops",
                "op": "revoke",
                "target": "notes",
                "why": "The notes do not mention the security fix.",
            },
            "`ops` revokes the approved notes: nothing supports `d_notes` any more.",
        ),
        (
            {"at": _at(2, 12), "op": "return", "agent": "dev", "task": "*", "purpose": "*"},
            "`dev` returns. The view would lack `d_notes`, so coverage falls short and the "
            "return is blocked; the decision's `missing` names `d_notes` and the obligation "
            "that needs it.",
        ),
        (
            {
                "at": _at(2, 13),
                "author": "dev",
                "op": "assert",
                "item": {
                    "id": "notes2",
                    "kind": "constraint",
                    "supports": ["d_notes"],
                    "text": "Release notes for 1.4.1, including the security fix, are approved.",
                },
            },
            "New notes support `d_notes` again.",
        ),
        (
            {"at": _at(2, 14), "op": "return", "agent": "dev", "task": "*", "purpose": "*"},
            "`dev` returns again: the view is issued with `build2` and `notes2`; the private "
            "memory `tip` stays withheld (`source_not_admitted`: its source `build` was "
            "replaced).",
        ),
    ]
    scenario = {
        "format": "readmit.scenario/1",
        "workspace": workspace,
        "agents": [
            {"id": "dev", "principal": "acme", "role": "release"},
            {"id": "ops", "principal": "acme", "role": "operations"},
        ],
        "policy": {"gamma": 1.0, "rho": 1.0, "on_incomplete": "block"},
        "events": [e for e, _ in events],
    }
    return scenario, [why for _, why in events]


def guide(file: Path, explanations: list[str], returned_at: str) -> str:
    """The Markdown guide to the starter written at ``file``; its issued return ``returned_at``."""
    lines = [
        f"# {file.name}: a starter readmit scenario",
        "",
        "JSON has no comments, so this file explains the scenario beside it. Replay it with",
        "",
        f"    readmit replay {file.name}",
        "",
        "(add `--json` for the decision records, `--html pages/` for one page per decision).",
        "Edit the events to describe your own team: every field is described in the README's",
        "`readmit.scenario/1` section, and every term in docs/concepts.md.",
        "",
        "`agents`: `dev` and `ops` work for the same principal, `acme`, in different roles.",
        "`policy`: a view is issued only when every obligation is covered (`gamma`) and",
        "every critical label is supported (`rho`); otherwise the return is blocked.",
        "",
        "The events, in order:",
        "",
    ]
    lines += [f"{n}. {why}" for n, why in enumerate(explanations, start=1)]
    lines += [
        "",
        "Whoever acts on the issued view checks it first, with the key it was signed with:",
        "set `READMIT_SIGNING_KEY` before `replay` (without it, `replay` signs with a",
        "throwaway key, and nothing can verify the view later). From this folder:",
        "",
        "    export READMIT_SIGNING_KEY=$(python3 -c "
        "'import secrets; print(secrets.token_urlsafe(32))')",
        f"    readmit replay {quote(file.name)} --json > decisions.json",
        f"    readmit verify decisions.json --decision 2 --at {returned_at}",
        "",
        f"`--decision 2` is the second return (event {len(explanations)}), the one that issued",
        "a view. `--at` is the time to check it at: a view holds from its return until an hour",
        "later, and the scenario's dates are past, so give its return's time.",
    ]
    return "\n".join(lines) + "\n"


_OTHER_FORMATS = frozenset(
    {".yaml", ".yml", ".toml", ".ini", ".csv", ".xml", ".md", ".markdown", ".txt", ".jsonl"}
)
"""Suffixes of formats a scenario is not written in: ``.json`` replaces them in the name
`init` suggests instead, which otherwise adds it."""


def _workspace(file: Path) -> str:
    """The workspace a starter at ``file`` names: the file's stem.

    Two starters then replay into one store side by side (both named ``starter``, the
    second was refused); ``starter`` where the stem is no workspace name.
    """
    try:
        return check_name(file.stem, "workspace")
    except InvalidInput:
        return "starter"


def _there(path: Path) -> bool:
    """Whether something is at ``path``.

    Raises:
        InvalidInput: if ``path`` cannot name a file (a name too long for the file system).
    """
    try:
        return path.exists()
    except OSError as exc:
        raise InvalidInput(f"cannot write {path}: {exc.strerror or exc}") from None


def _scenario_file(name: str) -> Path:
    """The file ``name`` names, where `init` may write a scenario: ``NAME.json``.

    Raises:
        InvalidInput: if ``name`` names no file, a folder, a file with no name before
            ``.json`` (``.json`` itself, a hidden file), or one not named ``*.json``
            (``x.md`` held JSON), suggesting a name that will do.
    """
    if not name.strip() or name.endswith(("/", os.sep)) or Path(name).name in ("", ".", ".."):
        # Path("newdir/") is Path("newdir"), and Path("") is the current folder
        raise InvalidInput(f"{name!r} names no file: give one, such as scenario.json")
    file = Path(name)
    if _there(file) and file.is_dir():
        raise InvalidInput(
            f"{name} is a folder: give a file in it, such as {file / 'scenario.json'}"
        )
    if file.name.lower().endswith(".json") and not file.name[:-5].strip(" ."):
        raise InvalidInput(
            f"{name!r} has no name before .json: give one, such as "
            f"{file.with_name('scenario.json')}"
        )
    if file.suffix.lower() != ".json":
        other = file.suffix.lower() in _OTHER_FORMATS
        json_name = file.with_suffix(".json") if other else file.with_name(f"{file.name}.json")
        raise InvalidInput(
            f"{name}: a scenario is JSON; give a name ending in .json, such as {json_name}"
        )
    return file


@click.command("init")
@click.argument("name", metavar="FILE")
def init(name: str) -> None:
    """Write a starter scenario to FILE (NAME.json) and a guide to it beside it (NAME.md).

    The scenario replays as written (`readmit replay FILE`): one blocked return and
    one issued. Neither file is ever overwritten.
    """
    file = _scenario_file(name)
    scenario, explanations = starter(_workspace(file))
    notes = file.with_suffix(".md")
    for path in (file, notes):
        if _there(path):
            raise InvalidInput(f"{path} already exists; pick another name")
    try:
        file.write_text(json.dumps(scenario, indent=2) + "\n", encoding="utf-8")
        notes.write_text(guide(file, explanations, scenario["events"][-1]["at"]), encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot write {exc.filename}: {exc.strerror or exc}") from None
    named = scenario["workspace"]
    click.echo(
        f"wrote {file} (the scenario, workspace {named!r}) and {notes} (what each event does)"
    )
    if named != file.stem:
        click.echo(f"note: {file.stem!r} is no workspace name, so the workspace is {named!r}")
    click.echo(f"next: readmit replay {quote(str(file))}")
