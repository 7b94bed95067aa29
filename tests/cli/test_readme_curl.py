"""The README's shell walkthrough of the service runs as written, against `readmit serve`."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from builders import KEY
from readmit.clock import now
from readmit.model import Agent
from readmit.service.keys import key_hash, new_key
from readmit.store import open_store
from servicekit import served

README = Path(__file__).parents[2] / "README.md"
START = "A1=rmk_...; A2=rmk_...; U=http://127.0.0.1:8000\n"


def walkthrough() -> str:
    """The README's block from its first line to the end of the block."""
    text = README.read_text(encoding="utf-8")
    start = text.index(START)
    return text[start : text.index("```", start)]


@pytest.mark.skipif(shutil.which("curl") is None, reason="the walkthrough needs curl")
def test_the_readme_curl_walkthrough_runs_as_written(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'team.db'}"
    store = open_store(db)
    roles = {"A1": "itinerary", "A2": "booking"}
    store.create_workspace(
        "trip", [Agent(id=a, principal="family", role=r) for a, r in roles.items()]
    )
    keys = {a: new_key() for a in roles}
    for agent, key in keys.items():
        store.add_agent_key("trip", agent, key_hash(key), now())
    store.close()
    script = walkthrough()
    if shutil.which("jq") is None:  # the rest of the block runs; its file is read below
        script = "\n".join(line for line in script.splitlines() if not line.startswith("jq "))

    with served(db) as (url, _):
        given = f"A1={keys['A1']}; A2={keys['A2']}; U={url}\n"
        done = subprocess.run(
            ["bash", "-e", "-c", given + script.removeprefix(START)],
            cwd=tmp_path,
            env={
                **os.environ,
                "READMIT_SIGNING_KEY": KEY.decode(),
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            },
            capture_output=True,
            text=True,
            timeout=300,
        )

    assert done.returncode == 0, done.stderr
    decision = json.loads((tmp_path / "decision.json").read_text())
    reasons = {e["item"]: e["reason"] for e in decision["excluded"]}
    assert reasons == {"A2/hotel": "revoked", "A1/pickup": "premise_invalidated"}
    assert [i["text"] for i in decision["view"]["items"]] == [
        "The 9:30 train to Lyon is booked for May 2."
    ]
    assert "ok: view trip:A1:return@" in done.stdout
    assert "verified: 1 item," in done.stdout
