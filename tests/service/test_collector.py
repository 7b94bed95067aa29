"""The server process's garbage collector: a return's objects die young instead of reaching
the oldest generation, whose collections walk the whole heap (`readmit.collector`)."""

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from builders import KEY
from readmit.cli import cli
from readmit.collector import YOUNG, tune_for_server
from readmit.store import open_store


@pytest.fixture
def collector() -> Iterator[None]:
    """The test process's collector as it was, whatever a test set."""
    before = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


@pytest.mark.usefixtures("collector")
def test_tuning_raises_the_young_threshold_and_keeps_the_older_ones() -> None:
    _, older, oldest = gc.get_threshold()

    tune_for_server()

    assert gc.get_threshold() == (YOUNG, older, oldest)
    assert gc.get_freeze_count() > 0  # what was loaded is left out of later collections


@pytest.mark.usefixtures("collector")
def test_serve_tunes_the_collector_once_its_app_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[Any, ...]] = []

    def run(app: Any, **options: Any) -> None:
        seen.append((type(app).__name__, gc.get_threshold()[0], gc.get_freeze_count() > 0))

    monkeypatch.setattr("uvicorn.run", run)
    made = tmp_path / "r.db"
    open_store(f"sqlite:///{made}").close()
    result = CliRunner().invoke(
        cli,
        ["serve", "--db", f"sqlite:///{made}"],
        env={"READMIT_SIGNING_KEY": KEY.decode()},
    )

    assert result.exit_code == 0, result.output
    assert seen == [("FastAPI", YOUNG, True)]
