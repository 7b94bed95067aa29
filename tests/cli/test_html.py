"""``explain --html`` and ``replay --html``: one self-contained page per decision.

Read as a person would: the page's visible text (html.parser), and once rendered in
headless Chromium when the binary is installed.
"""

import json
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from readmit.cli import cli
from readmit.cli.report_html import decision_html
from readmit.examples.travel import travel_scenario

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Page(HTMLParser):
    """The text a reader sees, by section heading, and every tag and attribute used."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: dict[str, str] = {"": ""}
        self.heading: str | None = None
        self.current = ""
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("style", "title"):
            self.skip += 1
        if tag in ("h1", "h2"):
            self.heading = ""
        if tag in ("td", "th", "p", "dd", "dt", "br", "tr"):
            self.sections[self.current] += " "

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "title"):
            self.skip -= 1
        if tag in ("h1", "h2") and self.heading is not None:
            self.current = self.heading.strip()
            self.sections[self.current] = ""
            self.heading = None

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.heading is not None:
            self.heading += data
        else:
            self.sections[self.current] += data

    @property
    def text(self) -> str:
        return " ".join(" ".join(self.sections.values()).split())

    def section(self, heading: str) -> str:
        return " ".join(self.sections[heading].split())


def read(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


@pytest.fixture
def pages(runner: CliRunner, tmp_path: Path) -> list[Path]:
    result = runner.invoke(cli, ["demo", "--html", str(tmp_path / "pages")])
    assert result.exit_code == 0, result.output
    return [tmp_path / "pages" / "decision-1.html", tmp_path / "pages" / "decision-2.html"]


def test_the_blocked_page_says_what_is_missing_and_how_to_unblock_it(pages: list[Path]) -> None:
    page = read(pages[0].read_text(encoding="utf-8"))

    assert "BLOCKED" in page.text
    assert "No view was issued" in page.text
    missing = page.section("What is missing")
    assert "d_p critical o_t" in missing
    assert "px Someone said the pickup might move to 8:15. — excluded as missing_receipt" in missing
    assert "it was asserted with unconfirmed: true (hearsay, so no receipt): once it is " in missing
    assert "confirmed, assert it again without unconfirmed: true" in missing
    assert "What would let the next return issue a view: for each label above" in missing
    assert "then return again" in missing
    assert "whose cites were all recorded gets one automatically" in missing  # receipt
    assert "p0 Recommended pickup at 8:00 from Sunrise Hotel. — excluded as" in missing
    per_obligation = page.section("Coverage per obligation")
    assert "o_t f_t d_c covered (critical), d_p missing (critical)" in per_obligation
    excluded = page.section("Excluded items")
    assert "h0 Sunrise Hotel is booked, refundable, $268 in total. revoked" in excluded
    assert "builtin: refers to h0, which e9 revoked (linked by Sunrise Hotel)" in excluded
    assert "(confidence 0.90, threshold τ 0.65)" in excluded  # the policy's τ
    memories = page.section("Private memories")
    assert "x_quiet The family cares most about quiet" in memories
    assert "withheld view_withheld: no view was issued at this return" in memories
    key = page.section("What the words on this page mean")
    for word in ("missing_receipt", "implicit stage", "view_withheld", "frontier", "epoch"):
        assert word in key


def test_the_page_says_it_is_the_operators_copy_and_keeps_the_texts(pages: list[Path]) -> None:
    for path in pages:
        page = read(path.read_text(encoding="utf-8"))

        assert (
            "Operator's copy: it names what the returning agent is not shown: items it may "
            "not read: n1; events: e14"
        ) in page.text
        assert "n1 Agency note: the Riverside commission is 12%." in page.section("Excluded items")


def test_the_blocked_page_says_what_each_selected_item_supports(pages: list[Path]) -> None:
    page = read(pages[0].read_text(encoding="utf-8"))

    kept = page.section("Selected, but not issued")
    assert "t1 The train now departs at 9:30. still valid, and passed every check; supports " in (
        kept
    )
    assert "supports d_t (needed by o_t)" in kept
    assert "supports d_h (needed by o_h)" in kept


def test_the_page_shows_what_coverage_a_view_needs(pages: list[Path]) -> None:
    page = read(pages[0].read_text(encoding="utf-8"))

    assert "Coverage: obligations 0.50 (needs 1.00), critical 0.75 (needs 1.00)" in page.text


def test_the_page_defines_its_words_and_its_column_headings(pages: list[Path]) -> None:
    page = read(pages[0].read_text(encoding="utf-8"))

    assert "admissible" not in page.text
    assert "record and frontier present" not in page.text
    assert "the verifier's reason)" not in page.text  # a heading for every exclusion
    assert "obligation and frontier selected" in page.section("Coverage per obligation")
    assert "its own record and its frontier (its progress marker) are both selected" in (
        page.section("Coverage per obligation")
    )
    assert "item reason stage evidence details" in page.section("Excluded items")
    key = page.section("What the words on this page mean")
    for word in ("selected set", "receipt", "operator's copy"):
        assert word in key


def test_the_page_lists_the_events_it_cites(pages: list[Path]) -> None:
    page = read(pages[0].read_text(encoding="utf-8"))

    events = page.section("Events this page cites")
    assert "e9 revoke A2 2026-05-02T10:00:00Z revokes h0: Sunrise cancelled the reservation" in (
        events
    )
    assert "e11 supersede A4" in events
    assert "e14 assert X1" in events


def test_a_page_says_it_was_made_by_readmit(pages: list[Path]) -> None:
    page = read(pages[0].read_text(encoding="utf-8"))

    assert "Made by readmit." in page.text
    assert "readmit explain" not in page.text


def test_the_issued_page_lists_the_view_and_readmitted_memories(pages: list[Path]) -> None:
    page = read(pages[1].read_text(encoding="utf-8"))

    assert "ISSUED" in page.text
    assert "What is missing" not in page.sections
    kept = page.section("Items in the view")
    assert "p1 Confirmed pickup at 8:30 from Riverside Hotel for the 9:30 train." in kept
    assert "supports d_p (needed by o_t)" in kept  # why each item is there
    assert "f_t Pickup: a new location and time must be confirmed. the progress marker" in kept
    memories = page.section("Private memories")
    assert "x_quiet" in memories
    assert "readmitted" in memories
    assert "source_not_admitted" in memories
    assert "its source h0 is revoked" in memories


def test_a_page_loads_nothing_from_elsewhere(pages: list[Path]) -> None:
    for path in pages:
        page = read(path.read_text(encoding="utf-8"))
        tags = {tag for tag, _ in page.tags}
        assert not tags & {"script", "link", "img", "iframe", "object", "embed"}
        assert all("href" not in a and "src" not in a for _, a in page.tags)
        assert "url(" not in path.read_text(encoding="utf-8")


def test_text_from_the_record_is_escaped(runner: CliRunner, tmp_path: Path) -> None:
    record: dict[str, Any] = json.loads(runner.invoke(cli, ["demo", "--json"]).stdout)["decisions"][
        0
    ]
    record["texts"]["h0"] = '<script>alert("x")</script> & <b>bold</b>'
    record["excluded"][0]["detail"] = "<img src=x onerror=alert(1)>"

    page = read(decision_html(record))

    assert {tag for tag, _ in page.tags}.isdisjoint({"script", "img", "b"})
    assert '<script>alert("x")</script> & <b>bold</b>' in page.text
    assert "<img src=x onerror=alert(1)>" in page.text


def test_explain_writes_the_page_of_a_stored_decision(
    runner: CliRunner, tmp_path: Path, travel: dict[str, Any]
) -> None:
    scenario = tmp_path / "trip.json"
    scenario.write_text(json.dumps(travel), encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'trip.db'}"
    runner.invoke(cli, ["replay", str(scenario), "--db", db])

    result = runner.invoke(cli, ["explain", "1", "--db", db, "--html", str(tmp_path / "1.html")])

    assert result.exit_code == 0, result.output
    page = read((tmp_path / "1.html").read_text(encoding="utf-8"))
    assert "d_p critical o_t" in page.section("What is missing")
    kept = page.section("Selected, but not issued")
    assert "c Family requirements" in kept
    assert "supports d_c (needed by o_h, o_t)" in kept
    assert "e9 revoke A2" in page.section("Events this page cites")


def test_an_unwritable_html_path_is_one_error_line(runner: CliRunner, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")

    result = runner.invoke(cli, ["demo", "--html", str(blocker / "pages")])

    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1].startswith("error [invalid_input]: --html:")


def test_an_unwritable_html_path_refuses_a_replay_before_it_stores_anything(
    runner: CliRunner, tmp_path: Path
) -> None:
    """The pages were written last: the replay was stored, and a second run refused."""
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    scenario = tmp_path / "trip.json"
    scenario.write_text(json.dumps(travel_scenario()), encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'trip.db'}"
    runner.invoke(cli, ["workspace", "create", "other", "--agent", "A1:p:r", "--db", db])
    args = ["replay", str(scenario), "--db", db]

    result = runner.invoke(cli, [*args, "--html", str(blocker / "pages")])

    assert result.exit_code == 2
    again = runner.invoke(cli, args)
    assert again.exit_code == 0, again.output


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_headless_chromium_renders_what_a_person_reads(pages: list[Path], tmp_path: Path) -> None:
    assert CHROMIUM is not None
    base = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path}"]
    dom = subprocess.run(
        [*base, "--dump-dom", pages[0].as_uri()],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    ).stdout
    shot = tmp_path / "shot.png"
    subprocess.run(
        [*base, "--window-size=1200,1600", f"--screenshot={shot}", pages[0].as_uri()],
        capture_output=True,
        timeout=180,
        check=True,
    )

    page = read(dom)
    assert "d_p critical o_t" in page.section("What is missing")
    assert "view_withheld" in page.section("Private memories")
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (1200, 1600)
    assert len(png) > 20_000  # a page of text, not a blank image


def test_the_judgment_says_how_long_it_waited_under_a_time_budget(runner: CliRunner) -> None:
    record: dict[str, Any] = json.loads(runner.invoke(cli, ["demo", "--json"]).stdout)["decisions"][
        0
    ]
    untimed = read(decision_html(record)).section("Judgment")
    record["judgment"] |= {
        "seconds": 1.25,
        "budget": {**record["judgment"]["budget"], "seconds": 5},
    }

    timed = read(decision_html(record)).section("Judgment")

    assert "seconds" not in untimed
    assert timed.endswith("It waited 1.2 of 5 allowed seconds on calls.")


def test_the_judgment_says_how_many_walk_steps_it_took(runner: CliRunner) -> None:
    record: dict[str, Any] = json.loads(runner.invoke(cli, ["demo", "--json"]).stdout)["decisions"][
        0
    ]
    record["judgment"] |= {"steps": 1234, "budget": {**record["judgment"]["budget"], "steps": 8192}}

    walked = read(decision_html(record)).section("Judgment")

    assert walked.endswith(
        "It took 1,234 of 8,192 allowed steps along chains of replacements and restatements."
    )
