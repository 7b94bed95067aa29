"""Data the ManBench and Memora loaders once turned into a stopped run or a silent loss.

Folder names no workspace may carry, task files at several depths or out of reach,
``manbench:.`` and ``memora:.``, two evaluation files, numbers too long for an item id:
each either makes episodes that run, or is refused naming the file.
"""

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from builders import manbench_row
from builders import manbench_task as write_task
from readmit.bench.episode import Episode
from readmit.bench.loaders import manbench, memora, rows
from readmit.bench.methods import Static
from readmit.bench.runner import run
from readmit.errors import InvalidInput
from readmit.wire.fields import check_name

SAMPLE = Path(__file__).parent.parent / "data" / "memora-sample" / "weekly" / "software_engineer"


def _runs(episodes: list[Episode]) -> None:
    """Every episode's history is recorded and scored (no name or event refused)."""
    rows = run(episodes, [Static()])
    assert len(rows) == len(episodes)
    for episode in episodes:
        check_name(episode.scenario["workspace"], "workspace")
        for agent in episode.scenario["agents"]:
            check_name(agent["principal"], "principal")


@pytest.fixture
def persona(tmp_path: Path) -> Path:
    copy = tmp_path / "software_engineer"
    shutil.copytree(SAMPLE, copy)
    return copy


@pytest.mark.parametrize(
    "name",
    ["t" * 200, "a\nb", "a\tb", "\u200b"],
    ids=["200-chars", "newline", "tab", "zero-width"],
)
def test_a_task_folder_of_any_name_makes_episodes_that_run(tmp_path: Path, name: str) -> None:
    write_task(tmp_path, name, [manbench_row(0), manbench_row(1)])
    write_task(tmp_path, "aaa", [manbench_row(0), manbench_row(1)])

    loaded = manbench.load(tmp_path)

    _runs(loaded.episodes)
    assert len({e.id for e in loaded.episodes}) == 4


def test_labels_keep_names_a_name_may_hold_and_tell_the_others_apart() -> None:
    assert rows.label("general_knowledge") == "general_knowledge"
    assert rows.label("sub/b") == "sub/b"
    made = {rows.label(n) for n in ("a\nb", "a\tb", "a b ", "t" * 300, "\u200b", "")}
    assert len(made) == 6
    for label in made:
        assert len(label) <= rows.LABEL_CHARS
        check_name(label, "label")


def test_task_files_at_several_depths_all_load_with_distinct_ids(tmp_path: Path) -> None:
    write_task(tmp_path, "a", [manbench_row(0), manbench_row(1)])
    write_task(tmp_path / "sub", "b", [manbench_row(0), manbench_row(1)])
    write_task(tmp_path / "large", "gk", [manbench_row(0), manbench_row(1, targets=[])])
    write_task(tmp_path / "small", "gk", [manbench_row(0), manbench_row(1)])

    loaded = manbench.load(tmp_path)

    assert sorted({e.id.rsplit("/", 1)[0] for e in loaded.episodes}) == [
        "manbench/a",
        "manbench/b",  # its folder's name, as before: only names two tasks share are paths
        "manbench/large/gk",
        "manbench/small/gk",
    ]
    assert len({e.id for e in loaded.episodes}) == len(loaded.episodes)
    [skipped] = loaded.skipped
    large = tmp_path / "large" / "gk" / "val_data.json"
    assert str(skipped) == f"{large} idx 1: targets: no targets"
    assert loaded.files["manbench/large/gk/0"] == large


@pytest.mark.parametrize("kind", ["dangling", "loop"])
def test_a_task_file_out_of_reach_is_named(tmp_path: Path, kind: str) -> None:
    write_task(tmp_path, "good", [manbench_row(0), manbench_row(1)])
    path = tmp_path / "gk" / "val_data.json"
    path.parent.mkdir()
    path.symlink_to(path if kind == "loop" else tmp_path / "nowhere.json")

    with pytest.raises(InvalidInput) as raised:
        manbench.load(tmp_path)
    assert str(raised.value).startswith(f"cannot read {path}: ")


def test_a_task_folder_that_cannot_be_listed_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As if its mode were 000 (the tests may run as root, who reads any folder)."""
    write_task(tmp_path, "good", [manbench_row(0), manbench_row(1)])
    locked = write_task(tmp_path, "gk", [manbench_row(0), manbench_row(1)]).parent
    listing = os.scandir

    def scandir(path: Any) -> Iterator[os.DirEntry[str]]:
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return listing(path)

    monkeypatch.setattr(os, "scandir", scandir)

    with pytest.raises(InvalidInput) as raised:
        manbench.load(tmp_path)
    assert str(raised.value) == f"cannot read {locked}: Permission denied"


def test_manbench_dot_is_named_by_the_folder_it_is_run_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = tmp_path / "general_knowledge"
    task.mkdir()
    (task / "val_data.json").write_text(
        json.dumps({"data": [manbench_row(0), manbench_row(1)]}), "utf-8"
    )
    monkeypatch.chdir(task)

    loaded = manbench.load(Path("."))

    assert [e.id for e in loaded.episodes] == [
        "manbench/general_knowledge/0",
        "manbench/general_knowledge/1",
    ]
    _runs(loaded.episodes)


def test_memora_dot_is_named_by_the_folder_it_is_run_in(
    persona: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(persona)

    loaded = memora.load(Path("."))

    assert loaded.episodes[0].id.startswith("memora/software_engineer/25/")
    _runs(loaded.episodes[:2])


@pytest.mark.parametrize("name", ["p" * 200, "a\nb"], ids=["long", "newline"])
def test_a_persona_folder_of_any_name_makes_episodes_that_run(tmp_path: Path, name: str) -> None:
    copy = tmp_path / name
    shutil.copytree(SAMPLE, copy)
    own = copy / "evaluation_questions_software_engineer.json"
    own.rename(copy / f"evaluation_questions_{name}.json")

    loaded = memora.load(copy)

    _runs(loaded.episodes[:2])


@pytest.mark.parametrize("field", ["turn", "session_id"])
def test_a_number_too_long_for_an_item_id_is_skipped_naming_the_file(
    persona: Path, field: str
) -> None:
    path = sorted((persona / "conversations").glob("session_*.json"))[1]
    data = json.loads(path.read_text("utf-8"))
    huge = int("9" * 100)
    if field == "turn":
        user = next(t for t in data["conversation"] if t["speaker"] != "ai_agent")
        user["turn"] = huge
    else:
        data["session_id"] = huge
    path.write_text(json.dumps(data), "utf-8")

    loaded = memora.load(persona)

    [skipped] = loaded.skipped
    assert skipped.file == path
    assert f"{field}: at most {memora.NUMBER_CHARS} characters" in skipped.reason
    _runs(loaded.episodes[:2])


def test_the_evaluation_file_named_for_the_persona_is_read(persona: Path) -> None:
    expected = len(memora.load(persona).episodes)
    other = persona / "evaluation_questions_software_engineer.bak.json"  # sorts first
    other.write_text(json.dumps({"questions": {}}), "utf-8")

    assert len(memora.load(persona).episodes) == expected > 0


def test_several_evaluation_files_none_named_for_the_persona_are_refused(persona: Path) -> None:
    own = persona / "evaluation_questions_software_engineer.json"
    own.rename(persona / "evaluation_questions_a.json")
    shutil.copy(persona / "evaluation_questions_a.json", persona / "evaluation_questions_b.json")

    with pytest.raises(InvalidInput, match="several evaluation files") as raised:
        memora.load(persona)
    told = str(raised.value)
    assert "evaluation_questions_a.json, evaluation_questions_b.json" in told
    assert "evaluation_questions_software_engineer.json" in told


def test_run_skips_an_episode_it_cannot_record_and_tells_which(tmp_path: Path) -> None:
    write_task(tmp_path, "gk", [manbench_row(0), manbench_row(1), manbench_row(2)])
    episodes = manbench.load(tmp_path).episodes
    broken = episodes[1]
    broken.scenario["events"][0]["author"] = "nobody"  # no such agent
    told: list[tuple[str, str]] = []

    rows = run(episodes, [Static()], on_unbuilt=lambda e, why: told.append((e.id, why)))

    assert [r.episode for r in rows] == [episodes[0].id, episodes[2].id]
    assert [e for e, _ in told] == [broken.id]
    with pytest.raises(InvalidInput):
        run(episodes, [Static()])
