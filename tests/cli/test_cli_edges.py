"""Every command ends in one ``error [code]: message`` line, never a traceback, on hostile input."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from builders import KEY
from readmit.admission.view import sign_view
from readmit.cli import cli
from readmit.cli.verify import UNSIGNED_MEMORIES
from readmit.config import new_ed25519_keys
from readmit.errors import StoreError
from readmit.examples.travel import travel_scenario
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore

AT = "2026-05-03T14:10:00Z"
ED25519_PRIVATE, ED25519_PUBLIC = new_ed25519_keys()

Content = str | bytes | Callable[[dict[str, Any]], str | bytes]
"""A file's content, or a function of the decisions a replay issued (HMAC and Ed25519)."""


HIDDEN = "(libpq's message is not shown: it may quote the password)"


@dataclass(frozen=True)
class Case:
    id: str
    args: list[str]
    """Arguments; ``{tmp}`` stands for the test's directory."""
    code: str
    message: str
    files: dict[str, Content] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


def _view(decisions: dict[str, Any], alg: str = "hmac") -> dict[str, Any]:
    view: dict[str, Any] = decisions[alg]["decisions"][1]["view"]
    return view


def _dumped(change: Callable[[dict[str, Any]], Any], alg: str = "hmac") -> Content:
    def make(decisions: dict[str, Any]) -> str:
        view = json.loads(json.dumps(_view(decisions, alg)))
        changed = change(view)
        return json.dumps(view if changed is None else changed)

    return make


def _resigned(**fields: Any) -> Content:
    """A view with ``fields`` changed and signed again with the right key."""

    def make(decisions: dict[str, Any]) -> str:
        view = {k: v for k, v in _view(decisions).items() if k != "signature"}
        return json.dumps(sign_view({**view, **fields}, HmacSha256Signer(KEY)))

    return make


def _duplicate_items(decisions: dict[str, Any]) -> str:
    """The signed view with an empty ``items`` first: a lax parser keeps the last one."""
    text = json.dumps(_view(decisions))
    return '{"items": [], ' + text[1:]


def _set_signature(value: Any, alg: str = "hmac") -> Content:
    def change(view: dict[str, Any]) -> None:
        view["signature"]["value"] = value(view["signature"]["value"])

    return _dumped(change, alg)


def _upper_digest(view: dict[str, Any]) -> None:
    view["items"][0]["digest"] = view["items"][0]["digest"].upper()


GOOD: dict[str, Content] = {"v.json": lambda d: json.dumps(_view(d))}
VERIFY = ["verify", "{tmp}/v.json", "--at", AT]
ED = {"READMIT_VERIFY_KEY": ED25519_PUBLIC}
SCENARIO = json.dumps(travel_scenario())

CASES = [
    Case("deep JSON", VERIFY, "invalid_input", "deeper than 64", {"v.json": "[" * 100_000}),
    Case("invalid UTF-8", VERIFY, "invalid_input", "not valid UTF-8", {"v.json": b'{"a":"\xff"}'}),
    Case("4301-digit integer", VERIFY, "invalid_input", "longer than", {"v.json": "9" * 4301}),
    Case("NaN", VERIFY, "invalid_input", "NaN", {"v.json": '{"x": NaN}'}),
    Case("lone surrogate", VERIFY, "invalid_input", "surrogate", {"v.json": '["\\udc80"]'}),
    Case("empty file", VERIFY, "invalid_input", "v.json is empty", {"v.json": ""}),
    Case("blank file", VERIFY, "invalid_input", "v.json is empty", {"v.json": " \n"}),
    Case("a list", VERIFY, "invalid_input", "holds no view", {"v.json": "[]"}),
    Case(
        "an issued decision without its view",
        [*VERIFY, "--decision", "1"],
        "invalid_input",
        'decision 1 says it was issued but holds no "view"',
        {"v.json": '{"decisions": [{"outcome": "issued"}]}'},
    ),
    Case("missing file", VERIFY, "invalid_input", "cannot read", {}),
    Case(
        "a scenario, not a view",
        VERIFY,
        "invalid_input",
        "is a scenario, not a view: replay it first",
        {"v.json": SCENARIO},
    ),
    Case("a directory", ["verify", "{tmp}"], "invalid_input", "is a directory", {}),
    Case(
        "duplicated items key",
        VERIFY,
        "invalid_input",
        "repeats the key 'items'",
        {"v.json": _duplicate_items},
    ),
    Case(
        "duplicated key inside an item",
        VERIFY,
        "invalid_input",
        "repeats the key 'text'",
        {"v.json": lambda d: json.dumps(_view(d)).replace('"text": ', '"text": "x", "text": ', 1)},
    ),
    Case(
        "a view without its signature",
        VERIFY,
        "view_rejected",
        "malformed view: it has no 'signature'",
        {"v.json": _dumped(lambda view: view.pop("signature") and None)},
    ),
    Case(
        "--at year 1", [*VERIFY[:3], "0001-01-01T00:00:00Z"], "view_rejected", "not valid at", GOOD
    ),
    Case(
        "--at year 9999",
        [*VERIFY[:3], "9999-12-31T23:59:59Z"],
        "view_rejected",
        "not valid at",
        GOOD,
    ),
    Case(
        "--at before year 1 in UTC",
        [*VERIFY[:3], "0001-01-01T00:00:00+23:59"],
        "invalid_input",
        "outside the years 1 to 9999",
        GOOD,
    ),
    Case(
        "--at after year 9999 in UTC",
        [*VERIFY[:3], "9999-12-31T23:59:59-23:59"],
        "invalid_input",
        "outside the years 1 to 9999",
        GOOD,
    ),
    Case("--at garbage", [*VERIFY[:3], "soon"], "invalid_input", "e.g. 2026-05-03T14:30:00Z", GOOD),
    *[
        Case(
            f"--at {form} (ISO 8601, not RFC 3339)",
            [*VERIFY[:3], form],
            "invalid_input",
            f"time {form!r} is not an RFC 3339 time",
            GOOD,
        )
        for form in ("2026-W22-2T14:30:00Z", "2026-153T14:30:00Z", "20260502T143000Z")
    ],
    Case(
        "signed expiry past year 9999",
        VERIFY,
        "view_rejected",
        "outside the years 1 to 9999",
        {"v.json": _resigned(expires_at="9999-12-31T23:59:59-23:59")},
    ),
    Case(
        "signed issue time before year 1",
        VERIFY,
        "view_rejected",
        "outside the years 1 to 9999",
        {"v.json": _resigned(issued_at="0001-01-01T00:00:00+23:59")},
    ),
    Case(
        "verify key not base64",
        VERIFY,
        "config_error",
        "READMIT_VERIFY_KEY",
        {"v.json": _dumped(lambda v: None)},
        {"READMIT_VERIFY_KEY": "ed25519:!!!"},
    ),
    Case(
        "verify key too short",
        VERIFY,
        "config_error",
        "READMIT_VERIFY_KEY",
        {"v.json": _dumped(lambda v: None)},
        {"READMIT_VERIFY_KEY": "ed25519:AAAA"},
    ),
    Case(
        "verify key with junk",
        VERIFY,
        "config_error",
        "READMIT_VERIFY_KEY",
        {"v.json": _dumped(lambda v: None)},
        {"READMIT_VERIFY_KEY": ED25519_PUBLIC + "!"},
    ),
    Case(
        "ed25519 signature with junk",
        VERIFY,
        "view_rejected",
        "signature does not match",
        {"v.json": _set_signature(lambda s: s + "!", "ed25519")},
        ED,
    ),
    Case(
        "ed25519 signature with extra padding",
        VERIFY,
        "view_rejected",
        "signature does not match",
        {"v.json": _set_signature(lambda s: s + "==", "ed25519")},
        ED,
    ),
    Case(
        "ed25519 signature unpadded",
        VERIFY,
        "view_rejected",
        "signature does not match",
        {"v.json": _set_signature(lambda s: s.rstrip("="), "ed25519")},
        ED,
    ),
    Case(
        "ed25519 signature as a number",
        VERIFY,
        "view_rejected",
        "signature does not match",
        {"v.json": _set_signature(lambda s: 7, "ed25519")},
        ED,
    ),
    Case(
        "an ed25519 view checked with an hmac key",
        VERIFY,
        "view_rejected",
        "signature does not match: the view is signed with 'ed25519', checked with a 'hmac-sha256'",
        {"v.json": lambda d: json.dumps(_view(d, "ed25519"))},
    ),
    Case(
        "audit of a directory",
        ["audit", "--db", "sqlite:///{tmp}"],
        "config_error",
        "is a directory, not a database file",
    ),
    Case(
        "a view checked with another shell's signing key",
        VERIFY,
        "view_rejected",
        "signature does not match: was it signed with another key?",
        GOOD,
        {"READMIT_SIGNING_KEY": "another-key-made-in-another-shell-0123456789"},
    ),
    Case(
        "hmac signature upper case",
        VERIFY,
        "view_rejected",
        "signature does not match",
        {"v.json": _set_signature(str.upper)},
    ),
    Case(
        "hmac signature non-ascii",
        VERIFY,
        "view_rejected",
        "signature does not match",
        {"v.json": _set_signature(lambda s: s[:-1] + "é")},
    ),
    Case(
        "hmac signature as a list",
        VERIFY,
        "view_rejected",
        "signature does not match",
        {"v.json": _set_signature(lambda s: [s])},
    ),
    Case(
        "item digest upper case",
        VERIFY,
        "view_rejected",
        "view rejected",
        {"v.json": _dumped(_upper_digest)},
    ),
    Case(
        "replay deep JSON",
        ["replay", "{tmp}/s.json"],
        "invalid_input",
        "deeper than 64",
        {"s.json": '{"a":' * 5000},
    ),
    Case(
        "replay invalid UTF-8",
        ["replay", "{tmp}/s.json"],
        "invalid_input",
        "not valid UTF-8",
        {"s.json": b"\xfe\xff"},
    ),
    Case(
        "replay huge integer",
        ["replay", "{tmp}/s.json"],
        "invalid_input",
        "longer than",
        {"s.json": '{"format": ' + "1" * 5000 + "}"},
    ),
    Case(
        "replay duplicate key",
        ["replay", "{tmp}/s.json"],
        "invalid_input",
        "repeats the key 'events'",
        {"s.json": '{"events": [], ' + SCENARIO[1:]},
    ),
    Case(
        "replay NUL in an id",
        ["replay", "{tmp}/s.json"],
        "invalid_event",
        "U+0000",
        {"s.json": SCENARIO.replace('"id": "h1"', '"id": "h1\\u0000"', 1)},
    ),
    Case(
        "replay a time without its offset",
        ["replay", "{tmp}/s.json"],
        "invalid_event",
        "at: must be an RFC 3339 time",  # without pydantic's "Value error, " before it
        {"s.json": re.sub(r'("at": "[^"]*?)Z"', r'\1"', SCENARIO, count=1)},
    ),
    Case(
        "audit of a missing database",
        ["audit", "--db", "sqlite:///{tmp}/typo.db"],
        "config_error",
        "no database at",
    ),
    Case(
        "explain of a missing database",
        ["explain", "1", "--db", "sqlite:///{tmp}/typo.db"],
        "config_error",
        "no database at",
    ),
    Case(
        "audit of a file that is not a database",
        ["audit", "--db", "sqlite:///{tmp}/text.db"],
        "store_error",
        "not a database",
        {"text.db": "hello"},
    ),
    Case(
        "a PostgreSQL server that refuses the connection",  # libpq's lines, as one line
        ["audit", "--db", "postgresql://nobody@127.0.0.1:1/readmit"],
        "store_error",
        "Connection refused Is the server running",
    ),
    *[
        Case(
            f"workspace create on a store URL {why}",
            ["workspace", "create", "w", "--agent", "A1:f:r", "--db", url],
            code,
            said,
        )
        for why, url, code, said in (
            (
                "with an unclosed IPv6 host",
                "postgresql://bob@[::1:5432/db",
                "config_error",
                "the PostgreSQL URL is malformed: end of string",
            ),
            (
                "with an unknown option",
                "postgresql://bob@127.0.0.1:1/db?foo=bar",
                "config_error",
                "the PostgreSQL URL is malformed: invalid",
            ),
            *[
                (f"with {why}", url, "config_error", f"the PostgreSQL URL is malformed: {HIDDEN}")
                for why, url in (
                    ("a password it cannot decode", "postgresql://u@h:1/db?password=S3c%zzretPW"),
                    ("a raw ? in a password", "postgresql://u:S3c?retPW@[::1/db"),
                    ("spaces in a password", "postgresql://u@h:1/db?password=my%20%20S3cretPW%zz"),
                    ("a fullwidth # in a password", "postgresql://u:S3cret\uff03PW@h:1/db?x=1"),
                )
            ],
            (
                "with a password, misspelled",
                "postgresq://u:S3cretPW@h/db",
                "config_error",
                "unknown store 'postgresq'",
            ),
            (
                "that is a libpq key=value string",
                "host=h user=u password=S3cretPW",
                "config_error",
                "not a store URL",
            ),
            (
                "that is a key=value string with a //",
                "host=h password=ab//S3cretPW",
                "config_error",
                "not a store URL",
            ),
            (
                "with SQLite options",
                "sqlite:///x.db?password=S3cretPW",
                "config_error",
                "takes no options",
            ),
            (
                "with what could be a password in a SQLite path, in no folder",
                "sqlite:///{tmp}/no/u:S3cretPW@h.db",
                "store_error",
                "cannot open SQLite store at '(not shown",
            ),
            (
                "with an empty host label",
                "postgresql://u@db..example.com/db",
                "config_error",
                "names a host that cannot be encoded",
            ),
            (
                "whose password holds a raw /",
                "postgresql://:S3cretPW/x@127.0.0.1:1/db",
                "store_error",
                HIDDEN,
            ),
            (
                "whose password holds a ? and then an @",
                "postgresql://u:S3c?retPW@Tail@h:1/db",
                "config_error",
                "write an @ in a user or password as %40",
            ),
            (
                "whose password holds a raw @",
                "postgresql://u:S3c@retPW@h/db",
                "config_error",
                "write an @ in a user or password as %40",
            ),
        )
    ],
    Case(
        "verifiers check with an API key that is not ASCII",
        ["verifiers", "check", "openai-compat:m@http://127.0.0.1:9/v1"],
        "config_error",
        "the API key must be printable ASCII",
        env={"READMIT_VERIFIER_API_KEY": "cl\u00e9-S3cretPW"},
    ),
    Case(
        "audit of a SQLite URL with a user and password",
        ["audit", "--db", "sqlite://u:S3cretPW@h/x.db"],
        "config_error",
        "no database at '(not shown: it may hold a password)'",
    ),
    Case(
        "audit of a SQLite file name too long for the file system",
        ["audit", "--db", "sqlite:///" + "a" * 300 + ":S3cretPW@h.db"],
        "config_error",
        "names no file it can open",
    ),
    *[
        Case(
            f"demo with a model URL {why}",
            ["demo", "--verifier", f"openai-compat:m@{url}"],
            "config_error",
            said,
        )
        for why, url, said in (
            ("with a password", "http://me:S3cretPW@127.0.0.1:9/v1", "may hold no @"),
            ("with a spaced password", "http://me:S3c retPW@127.0.0.1:9/v1", "may hold no @"),
            ("with a raw ? in a password", "http://me:1234?S3cretPW@h/v1", "may hold no @"),
            ("with a password in its query", "http://h:9/v1?password=S3cretPW", "may hold no @"),
            ("with an empty host label", "http://a..b/v1", "the URL is malformed"),
            ("with a malformed IDNA host", "http://xn--/v1", "the URL is malformed"),
            ("with port 0", "http://127.0.0.1:0/v1", "the URL is malformed"),
        )
    ],
    Case(
        "demo with an unknown verifier whose spec holds a password",
        ["demo", "--verifier", "openai:m@http://me:S3cretPW@h/v1"],
        "config_error",
        "unknown verifier 'openai:m@http://…'",
    ),
    *[
        Case(
            f"verifiers check {spec.split(':')[0]} given an argument holding a password",
            [
                "verifiers",
                "check",
                *(["builtin", option] if option == "--embeddings" else []),
                spec,
            ],
            "config_error",
            said,
        )
        for option, spec, said in (
            ("--verifier", "builtin:m@http://u:S3cretPW@h/v1", "the argument 'm@http://…'"),
            ("--embeddings", "wordllama:m@http://u:S3cretPW@h/v1", "wordllama:m@http://…"),
            ("--verifier", "gguf:m@http://u:S3cretPW@h/v1", "gguf:(not shown"),
        )
    ],
    Case(
        "demo with a malformed chain whose spec holds a password",
        ["demo", "--verifier", "chain:openai-compat:m@http://me:S3cretPW@h/v1"],
        "config_error",
        "write chain:FIRST,SECOND",
    ),
    Case(
        "audit of a SQLite URL with options",
        ["audit", "--db", "sqlite:///{tmp}/t.db?mode=ro"],
        "config_error",
        "a SQLite store URL takes no options",
    ),
    Case(
        "audit of a SQLite file whose name holds a '?'",
        ["audit", "--db", "sqlite:///{tmp}/our?team.db"],
        "config_error",
        "a file whose name holds a '?' must be renamed",
    ),
    *[
        Case(f"init {name!r}", ["init", name], "invalid_input", "names no file: give one")
        for name in ("", " ", "newdir/", ".")
    ],
    Case("init of a folder", ["init", "{tmp}"], "invalid_input", "is a folder: give a file in it"),
    Case(
        "workspace create on a SQLite URL with options",
        [
            "workspace",
            "create",
            "w",
            "--agent",
            "A1:family:itinerary",
            "--db",
            "sqlite:///q.db?mode=ro",
        ],
        "config_error",
        "a SQLite store URL takes no options",
    ),
    Case(
        "audit of a bare path instead of a store URL",
        ["audit", "--db", "team.db"],
        "config_error",
        "'team.db' is not a store URL: for a SQLite file write sqlite:///team.db",
    ),
    *[
        Case(
            f"workspace create on {url} (a variable left unset)",
            ["workspace", "create", "w", "--agent", "A1:family:itinerary", "--db", url],
            "config_error",
            "names no file: write sqlite:///PATH",
        )
        for url in ("sqlite:///", "sqlite://")
    ],
    Case(
        "bench with no seeds",
        ["bench", "--seeds", "0", "--suite", "drift", "--out", "{tmp}/results"],
        "invalid_input",
        "'--seeds': 0 is not in the range x>=1",
    ),
    Case(
        "audit of an unknown store",
        ["audit", "--db", "mysql://x"],
        "config_error",
        "unknown store",
    ),
    Case(
        "audit with NUL in the workspace",
        ["audit", "--workspace", "w\x00", "--db", "sqlite:///{tmp}/typo.db"],
        "invalid_input",
        "U+0000",
    ),
    Case(
        "explain of an id past 64 bits",
        ["explain", "99999999999999999999", "--db", "sqlite:///{tmp}/typo.db"],
        "invalid_input",
        "99999999999999999999",
    ),
    *[
        Case(
            f"workspace create with {what}",
            ["workspace", "create", name, "--agent", agent, "--db", "sqlite:///{tmp}/w.db"],
            "invalid_input",
            message,
        )
        for what, name, agent, message in [
            ("NUL in the name", "w\x00", "A1:family:itinerary", "U+0000"),
            ("an escape in the name", "w\x1b[2J", "A1:family:itinerary", "U+001B"),
            ("NUL in an agent id", "w", "A\x001:family:itinerary", "U+0000"),
            ("a control character in a principal", "w", "A1:fam\x07ily:itinerary", "U+0007"),
            ("NUL in a role", "w", "A1:family:itin\x00erary", "U+0000"),
            ("a blank role", "w", "A1:family: ", "ROLE"),
        ]
    ],
    Case(
        "keys create on a missing database",
        ["keys", "create", "trip", "A1", "--db", "sqlite:///{tmp}/typo.db"],
        "config_error",
        "no database at",
    ),
    Case("bench team not a number", ["bench", "--team", "4,x"], "invalid_input", "--team"),
    Case("bench team of zero", ["bench", "--team", "0"], "invalid_input", "--team"),
    Case(
        "bench output under a file",
        ["bench", "--out", "{tmp}/f/out", "--suite", "drift"],
        "invalid_input",
        "--out",
        {"f": "a file"},
    ),
    Case(
        "bench of a generated suite given a path",
        ["bench", "--out", "{tmp}/out", "--suite", "drift:data.json"],
        "config_error",
        "--suite drift is generated, it takes no path (it reads no file)",
    ),
    Case(
        "bench of the synthetic STALE suite given a path",
        ["bench", "--out", "{tmp}/out", "--suite", "stale-synth:data.json"],
        "config_error",
        "--suite stale-synth is generated, it takes no path (stale:FILE reads a STALE file)",
    ),
    Case(
        "bench of a misspelled suite",
        ["bench", "--out", "{tmp}/out", "--suite", "drif"],
        "config_error",
        "unknown suite 'drif' (did you mean 'drift'?",
    ),
    Case("explain of a word", ["explain", "two"], "invalid_input", "must be a whole number"),
    Case("explain of zero", ["explain", "0"], "invalid_input", "must be a whole number from 1"),
    Case(
        "explain with neither --db nor READMIT_DB",
        ["explain", "1"],
        "config_error",
        "the default store 'sqlite:///readmit.db' (neither --db nor READMIT_DB was set); "
        "'readmit replay' without --db decides on a throwaway in-memory store",
    ),
    Case(
        "explain with READMIT_DB",
        ["explain", "1"],
        "config_error",
        "(from READMIT_DB 'sqlite:///typo.db')",
        env={"READMIT_DB": "sqlite:///typo.db"},
    ),
    Case(
        "keys in a new shell, with neither --db nor READMIT_DB",
        ["keys", "create", "trip", "A2"],
        "config_error",
        "(neither --db nor READMIT_DB was set); name the store the workspace was made in "
        "with --db URL",
    ),
    Case(
        "explain to a folder's path",
        ["explain", "1", "--html", "{tmp}/pages/"],
        "invalid_input",
        "'{tmp}/pages/' names a folder: explain writes one page",
    ),
    Case(
        "bench of a method in lower case",
        ["bench", "--out", "{tmp}/out", "--method", "trace"],
        "config_error",
        "unknown method(s) ['trace'] (did you mean 'TRACE'?",
    ),
    Case(
        "verify of the service's refusal saved by curl",
        VERIFY,
        "invalid_input",
        "v.json holds an error answer, not a view: unauthenticated: no such key",
        {"v.json": '{"code": "unauthenticated", "message": "no such key", "details": null}'},
    ),
    Case("unknown command", ["frobnicate"], "invalid_input", "No such command"),
    Case("unknown option", ["verify", "--bogus"], "invalid_input", "No such option"),
    Case(
        "short HMAC key",
        VERIFY,
        "config_error",
        "READMIT_SIGNING_KEY",
        {"v.json": "{}"},
        {"READMIT_SIGNING_KEY": "short"},
    ),
]


@pytest.fixture(scope="module")
def decisions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The travel case's decisions, signed with the tests' HMAC key and with an Ed25519 key."""
    path = tmp_path_factory.mktemp("replay") / "trip.json"
    path.write_text(SCENARIO, encoding="utf-8")
    out = {}
    for alg, key in [("hmac", KEY.decode()), ("ed25519", ED25519_PRIVATE)]:
        result = CliRunner(env={"READMIT_SIGNING_KEY": key}).invoke(
            cli, ["replay", str(path), "--json"]
        )
        out[alg] = json.loads(result.stdout)
    return out


def _arrange(case: Case, tmp_path: Path, decisions: dict[str, Any]) -> list[str]:
    for name, content in case.files.items():
        data = content(decisions) if callable(content) else content
        target = tmp_path / name
        if isinstance(data, bytes):
            target.write_bytes(data)
        else:
            target.write_text(data, encoding="utf-8")
    return [a.replace("{tmp}", str(tmp_path)) for a in case.args]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_hostile_input_ends_in_one_error_line(
    case: Case, tmp_path: Path, decisions: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = _arrange(case, tmp_path, decisions)
    env = {"READMIT_SIGNING_KEY": KEY.decode(), "READMIT_VERIFY_KEY": None, "READMIT_DB": None}
    monkeypatch.chdir(tmp_path)

    result = CliRunner(env={**env, **case.env}).invoke(cli, args)

    errors = [line for line in result.stderr.splitlines() if line.startswith("error [")]
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code != 0
    assert errors == [result.stderr.splitlines()[-1]], result.stderr
    assert errors[0].startswith(f"error [{case.code}]: "), errors
    assert case.message.replace("{tmp}", str(tmp_path)) in errors[0]
    assert "Traceback" not in result.output
    assert "S3cretPW" not in result.output  # a URL's password is never echoed


@pytest.mark.parametrize("at", [AT, AT.lower()])  # RFC 3339 allows t and z in lower case
def test_a_well_formed_view_still_verifies(
    tmp_path: Path, decisions: dict[str, Any], monkeypatch: pytest.MonkeyPatch, at: str
) -> None:
    (tmp_path / "v.json").write_text(json.dumps(_view(decisions, "ed25519")), encoding="utf-8")
    monkeypatch.delenv("READMIT_SIGNING_KEY", raising=False)

    result = CliRunner(env={"READMIT_VERIFY_KEY": ED25519_PUBLIC}).invoke(
        cli, ["verify", str(tmp_path / "v.json"), "--at", at]
    )

    assert result.exit_code == 0, result.output
    assert result.output.startswith("ok: view")


def _verified(tmp_path: Path, document: dict[str, Any], at: str = AT) -> Any:
    (tmp_path / "d.json").write_text(json.dumps(document), encoding="utf-8")
    return CliRunner(env={"READMIT_SIGNING_KEY": KEY.decode(), "READMIT_VERIFY_KEY": None}).invoke(
        cli, ["verify", str(tmp_path / "d.json"), "--at", at]
    )


def test_a_decision_whose_exclusions_of_unreadable_items_its_view_leaves_out_verifies(
    tmp_path: Path, decisions: dict[str, Any]
) -> None:
    decision = decisions["hmac"]["decisions"][1]
    assert "n1" in decision["hidden"]  # the agency's note: excluded, and not in the view

    result = _verified(tmp_path, decision)

    assert result.exit_code == 0, result.output
    assert decision["readmitted"]
    assert f"note: {UNSIGNED_MEMORIES}" in result.stderr  # no view holds a memory


def _shown(decision: dict[str, Any]) -> str:
    """The id of an item the decision's signed view holds."""
    shown: str = decision["view"]["items"][1]["id"]
    return shown


def _hiding(decision: dict[str, Any]) -> None:
    """A forged exclusion of an item the view holds, said hidden (so left out of the view)."""
    decision["hidden"].append(_shown(decision))
    decision["excluded"].append(_excluding(decision))


def _excluding(decision: dict[str, Any], reason: str = "revoked") -> dict[str, Any]:
    """A forged exclusion of an item the signed view holds: "do not act on it"."""
    evidence: list[str] = []
    return {"item": _shown(decision), "reason": reason, "stage": "explicit", "evidence": evidence}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d["items"].append("x"), "items"),
        (lambda d: d["texts"].update({d["items"][0]: "Wire the deposit to account 666."}), "texts"),
        (lambda d: d["excluded"].pop(0), "excluded"),
        (lambda d: d.update(agent="A2"), "agent"),
        (lambda d: d.update(outcome="blocked"), "outcome"),
        # unsigned parts the redaction leaves out, naming an item the view holds (a review)
        (lambda d: d["excluded"].append(_excluding(d, "not_selected")), "excluded"),
        (_hiding, "excluded"),
    ],
)
def test_a_decision_whose_own_fields_differ_from_its_signed_view_is_rejected(
    tmp_path: Path, decisions: dict[str, Any], change: Callable[[dict[str, Any]], Any], field: str
) -> None:
    """Only the view is signed: a decision rewritten around a genuine view verified (a probe)."""
    decision = json.loads(json.dumps(decisions["hmac"]["decisions"][1]))
    change(decision)

    result = _verified(tmp_path, decision)

    assert result.exit_code == 3, result.output
    assert f'its "{field}" differs from its signed view\'s' in result.output


_HIDDEN_EVIDENCE = {
    "format": "readmit.scenario/1",
    "workspace": "trip",
    "agents": [
        {"id": "A1", "principal": "family", "role": "r"},
        {"id": "B1", "principal": "agency", "role": "r"},
    ],
    "events": [
        {"at": "2026-05-01T08:00:00Z", "author": "B1", "op": "assert", "item": {
            "id": "held", "key": "room", "text": "Suite held for the agency.",
            "readers": {"principals": ["agency"]}}},
        {"at": "2026-05-01T08:00:00Z", "author": "A1", "op": "assert", "item": {
            "id": "open", "key": "room", "text": "Riverside Hotel room 7 is held for the family.",
            "readers": "*"}},
        {"at": "2026-05-01T08:00:00Z", "author": "A1", "op": "assert", "item": {
            "id": "plan", "text": "Check in at Riverside Hotel room 7 at 15:00.", "readers": "*"}},
        {"at": "2026-05-01T08:01:00Z", "op": "depart", "agent": "A1"},
        {"at": "2026-05-01T08:03:00Z", "author": "B1", "id": "agency-swap", "op": "assert",
            "item": {"id": "swap", "key": "room", "readers": "*",
                     "text": "Sunrise Hotel room 9 is held for the family."}},
        {"at": "2026-05-01T08:05:00Z", "op": "return", "agent": "A1", "task": "trip",
            "purpose": "plan"},
    ],
}  # fmt: skip
"""An exclusion the agent sees whose evidence it may not: B1's keyed assert replaced the
agency's item and A1's; the record names its event, the view leaves it out."""


@pytest.fixture
def hidden_evidence(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "trip.json"
    path.write_text(json.dumps(_HIDDEN_EVIDENCE), encoding="utf-8")
    result = CliRunner(env={"READMIT_SIGNING_KEY": KEY.decode()}).invoke(
        cli, ["replay", str(path), "--json"]
    )
    assert result.exit_code == 0, result.output
    decision: dict[str, Any] = json.loads(result.stdout)["decisions"][0]
    assert decision["hidden"]
    assert decision["excluded"] != decision["view"]["excluded"]
    return decision


def test_a_decision_whose_exclusions_the_view_redacts_verifies(
    tmp_path: Path, hidden_evidence: dict[str, Any]
) -> None:
    """Compared unredacted, a genuine replay record was rejected (a review's finding)."""
    result = _verified(tmp_path, hidden_evidence, at="2026-05-01T08:06:00Z")

    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(hidden=[["x"]]),
        lambda d: d.update(hidden="held"),
        lambda d: d["excluded"].insert(0, {"item": ["x"], "reason": "revoked"}),
        lambda d: d["excluded"].insert(0, 7),
    ],
)
def test_a_decision_of_a_malformed_shape_is_rejected_not_an_internal_error(
    tmp_path: Path, hidden_evidence: dict[str, Any], change: Callable[[dict[str, Any]], Any]
) -> None:
    change(hidden_evidence)

    result = _verified(tmp_path, hidden_evidence, at="2026-05-01T08:06:00Z")

    assert result.exit_code == 3, result.output
    assert 'its "excluded" differs' in result.output


def test_a_view_that_wraps_a_genuine_view_is_rejected(
    tmp_path: Path, decisions: dict[str, Any]
) -> None:
    """A forgery carrying a genuine view under "view" verified as that view (a probe)."""
    genuine = _view(decisions)
    forged = {**genuine, "agent": "A2", "expires_at": "9999-01-01T00:00:00Z", "view": genuine}

    result = _verified(tmp_path, forged)

    assert result.exit_code == 3, result.output
    assert 'holds another view under "view"' in result.output


@pytest.mark.skipif(shutil.which("jq") is None, reason="needs jq")
def test_a_view_passed_through_jq_still_verifies(
    tmp_path: Path, decisions: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """jq 1.6 writes the coverage 1.0 as 1; the view was refused as tampered with."""
    (tmp_path / "v.json").write_text(json.dumps(_view(decisions, "ed25519")), encoding="utf-8")
    rewritten = subprocess.run(
        ["jq", ".", str(tmp_path / "v.json")], capture_output=True, check=True, timeout=60
    ).stdout
    (tmp_path / "jq.json").write_bytes(rewritten)
    monkeypatch.delenv("READMIT_SIGNING_KEY", raising=False)

    result = CliRunner(env={"READMIT_VERIFY_KEY": ED25519_PUBLIC}).invoke(
        cli, ["verify", str(tmp_path / "jq.json"), "--at", AT]
    )

    assert result.exit_code == 0, result.output
    assert result.output.startswith("ok: view")


def test_audit_does_not_create_a_database_for_a_mistyped_path(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["audit", "--db", f"sqlite:///{tmp_path}/typo.db"])

    assert result.exit_code == 2
    assert not (tmp_path / "typo.db").exists()


@pytest.mark.parametrize("content", [b"", b"notes, not a database"], ids=["empty", "text"])
def test_audit_does_not_turn_a_file_that_is_no_database_into_one(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(content)

    result = CliRunner().invoke(cli, ["audit", "--db", f"sqlite:///{path}"])

    assert result.exit_code == 4
    assert "is not a database: no SQLite file" in result.stderr
    assert path.read_bytes() == content


@pytest.mark.parametrize(
    "args",
    [
        ["keys", "create", "trip", "A1"],
        ["keys", "list"],
        ["keys", "revoke", "trip", "A1"],
        ["workspace", "create", "w\x00", "--agent", "A1:family:itinerary"],
        ["workspace", "create", "w", "--agent", "A1:family:itinerary\x00"],
        ["workspace", "create", "w", "--agent", "A1:family:itinerary", "--agent", "A1:x:y"],
    ],
)
def test_refused_workspace_and_key_commands_create_no_database(
    tmp_path: Path, args: list[str]
) -> None:
    result = CliRunner().invoke(cli, [*args, "--db", f"sqlite:///{tmp_path}/typo.db"])

    assert result.exit_code == 2, result.output
    assert not (tmp_path / "typo.db").exists()


def _without_readmit(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if not k.startswith("READMIT_")}


@pytest.mark.parametrize(
    ("content", "message"),
    [("[" * 100_000, "deeper than 64"), (b"\xff", "not valid UTF-8"), ("7" * 4301, "longer than")],
)
def test_the_installed_entry_point_prints_one_error_line(
    tmp_path: Path, content: str | bytes, message: str
) -> None:
    path = tmp_path / "v.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())

    result = subprocess.run(
        [sys.executable, "-m", "readmit", "verify", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**_without_readmit(os.environ), "READMIT_SIGNING_KEY": KEY.decode()},
    )

    assert result.returncode == 2
    assert result.stderr.splitlines() == [result.stderr.splitlines()[0]]
    assert result.stderr.startswith("error [invalid_input]: ")
    assert message in result.stderr


def _writing_to(stdout: int, args: list[str]) -> subprocess.CompletedProcess[str]:
    """``readmit`` run with ``args``, its stdout on descriptor ``stdout``, stderr read."""
    return subprocess.run(
        [sys.executable, "-m", "readmit", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
        env={**_without_readmit(os.environ), "READMIT_SIGNING_KEY": KEY.decode()},
    )


@pytest.mark.parametrize("args", [["demo"], ["--help"], ["--version"], ["demo", "--help"]])
def test_output_to_a_reader_that_has_gone_ends_quietly_as_a_unix_tool_does(
    args: list[str],
) -> None:
    """``readmit demo | head -1`` ended with status 1 and not a word of why (a review)."""
    read, write = os.pipe()
    os.close(read)  # the reader has gone before the first line: every write fails
    try:
        result = _writing_to(write, args)
    finally:
        os.close(write)

    assert (result.returncode, result.stderr) == (141, "")  # as a shell shows SIGPIPE's end


_SOCKET_BREAKS = """
import socket
import click
from readmit.cli import _Group

@click.group(cls=_Group)
def group() -> None:
    pass

@group.command()
def send() -> None:
    click.echo("sending")
    ours, theirs = socket.socketpair()
    theirs.close()
    ours.sendall(b"x" * 1_000_000)  # the peer has gone: BrokenPipeError

group(["send"])
"""


def test_a_broken_pipe_that_is_not_stdouts_is_a_failure_not_a_reader_gone() -> None:
    """Every BrokenPipeError ended quietly with 141, as if stdout's reader had gone."""
    result = subprocess.run(
        [sys.executable, "-c", _SOCKET_BREAKS],
        capture_output=True,  # stdout is a pipe whose reader (this test) is still there
        text=True,
        timeout=120,
        check=False,
    )

    assert (result.returncode, result.stdout) == (1, "sending\n")
    assert result.stderr.startswith("error [internal]: BrokenPipeError: [Errno 32]")


def _ctrl_c_as_in_a_terminal() -> None:
    """SIGINT as a terminal's foreground job starts with it (in the child, before exec).

    A child inherits an ignored SIGINT, and Python keeps ignoring it: the test's worker
    had it ignored at times in CI (stop 71: the hung command's ``SigIgn`` held SIGINT and
    SIGQUIT), and the command went on reading its scenario.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_ends_a_command_in_one_line_with_the_status_a_shell_shows(tmp_path: Path) -> None:
    """Ctrl-C printed click's "Aborted!" with status 1, the status of a bug (a newcomer).

    The scenario is a FIFO: once this test's open for writing returns, the command is
    reading it, inside the command, whatever the machine's speed.
    """
    fifo = tmp_path / "scenario.json"
    os.mkfifo(fifo)
    command = subprocess.Popen(
        [sys.executable, "-m", "readmit", "replay", str(fifo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**_without_readmit(os.environ), "PYTHONFAULTHANDLER": "1"},
        preexec_fn=_ctrl_c_as_in_a_terminal,
    )
    try:
        with fifo.open("w"):  # blocks until the command opens the scenario to read it
            command.send_signal(signal.SIGINT)
            try:
                out, err = command.communicate(timeout=120)
            except subprocess.TimeoutExpired:  # it hung in CI (stop 71): say where, and why
                masks = Path(f"/proc/{command.pid}/status").read_text()  # SIGINT blocked, ignored?
                command.send_signal(signal.SIGABRT)  # the fault handler prints every thread
                stacks = command.communicate()[1]
                pytest.fail(f"Ctrl-C did not end the command:\n{masks}\n{stacks}")
    finally:
        if command.poll() is None:
            command.kill()
            command.communicate()  # reaped, its pipes closed: not left to fail a later test

    assert (command.returncode, out) == (130, "")  # 128 + SIGINT
    assert err == "error [interrupted]: stopped by an interrupt (Ctrl-C) before it finished\n"


@pytest.mark.parametrize("args", [["demo"], ["--version"], ["keys", "signing"]])
def test_a_command_started_with_stdout_closed_fails_in_one_line(args: list[str]) -> None:
    """``readmit demo >&-`` exited 0: click writes to a closed stdout silently."""
    result = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "readmit", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**_without_readmit(os.environ), "READMIT_SIGNING_KEY": KEY.decode()},
    )

    assert (result.returncode, result.stderr) == (
        2,
        "error [invalid_input]: stdout is closed: send the output to /dev/null to discard it\n",
    )


def test_a_command_started_with_stdout_and_stderr_closed_fails_silently() -> None:
    result = subprocess.run(
        ["sh", "-c", 'exec "$@" >&- 2>&-', "sh", sys.executable, "-m", "readmit", "demo"],
        timeout=120,
        check=False,
        env={**_without_readmit(os.environ), "READMIT_SIGNING_KEY": KEY.decode()},
    )

    assert result.returncode == 2


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["--help"], ["--version"]])
def test_help_or_version_to_a_full_disk_fails_in_one_line(args: list[str]) -> None:
    """It ended in a traceback (a review's finding); a command's own output did not."""
    with open("/dev/full", "w") as full:
        result = _writing_to(full.fileno(), args)

    assert result.returncode == 1
    assert result.stderr == "error [internal]: OSError: [Errno 28] No space left on device\n"


@pytest.mark.parametrize("suite", ["drif", "manbench"])
def test_a_wrong_bench_suite_leaves_no_results_folder(tmp_path: Path, suite: str) -> None:
    result = CliRunner().invoke(cli, ["bench", "--out", str(tmp_path / "out"), "--suite", suite])

    assert result.exit_code == 2
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "args", [["--condition", "nope"], ["--suite", "stale:{tmp}/missing.json"]], ids=str
)
def test_a_refused_bench_run_leaves_no_results_folder(tmp_path: Path, args: list[str]) -> None:
    """The folder was made before the episodes were loaded and their conditions checked."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    out = tmp_path / "out"

    result = CliRunner().invoke(cli, ["bench", "--seeds", "1", "--out", str(out), *args])

    assert result.exit_code == 2, result.output
    assert not out.exists()


def test_an_ablation_named_alone_is_refused_with_its_full_name() -> None:
    result = CliRunner().invoke(cli, ["bench", "--method", "OAS", "--seeds", "1"])

    assert result.exit_code == 2
    assert "did you mean 'TRACE w/o OAS'?" in result.stderr


def test_a_refused_replay_leaves_no_database_where_it_made_one(tmp_path: Path) -> None:
    scenario = travel_scenario()
    later = next(e for e in scenario["events"] if "target" in e)
    later["target"] = "nothing-by-this-name"
    path = tmp_path / "dangling.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    made, held = tmp_path / "made.db", tmp_path / "held.db"
    CliRunner().invoke(cli, ["workspace", "create", "other", "--agent", "A1:p:r", "--db",
                             f"sqlite:///{held}"])  # fmt: skip
    env = {"READMIT_SIGNING_KEY": KEY.decode()}

    for db in (made, held):
        result = CliRunner(env=env).invoke(cli, ["replay", str(path), "--db", f"sqlite:///{db}"])

        assert result.exit_code == 2, result.output
        assert "nothing-by-this-name" in result.stderr
    assert not made.exists()
    assert held.exists()  # not this command's to remove


def test_demo_with_a_bad_signing_key_tells_no_story_first() -> None:
    result = CliRunner(env={"READMIT_SIGNING_KEY": "short"}).invoke(cli, ["demo"])

    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error [config_error]: READMIT_SIGNING_KEY")


def _full_disk(*_: object, **__: object) -> int:
    raise StoreError("disk full while recording the decision")


def test_a_replay_that_fails_once_it_has_stored_says_what_it_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "trip.json"
    path.write_text(SCENARIO, encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'held.db'}"
    CliRunner().invoke(cli, ["workspace", "create", "other", "--agent", "A1:p:r", "--db", db])
    monkeypatch.setattr(SqlStore, "record_decision", _full_disk)  # not foreseeable by a trial

    result = CliRunner(env={"READMIT_SIGNING_KEY": KEY.decode()}).invoke(
        cli, ["replay", str(path), "--db", db]
    )

    assert result.exit_code != 0
    [line] = [x for x in result.stderr.splitlines() if x.startswith("error [")]
    assert "disk full" in line
    assert "workspace 'family-trip' now holds the scenario's history up to that point" in line


def test_a_return_whose_view_could_not_expire_is_refused_before_anything_is_stored(
    tmp_path: Path,
) -> None:
    """The trial run never decided, so such a return was found after the history was stored."""
    scenario = travel_scenario()
    last = [e for e in scenario["events"] if e["op"] == "return"][-1]
    last["at"] = "9999-12-31T23:59:59Z"
    path = tmp_path / "late.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'held.db'}"
    CliRunner().invoke(cli, ["workspace", "create", "other", "--agent", "A1:p:r", "--db", db])
    runner = CliRunner(env={"READMIT_SIGNING_KEY": KEY.decode()})

    result = runner.invoke(cli, ["replay", str(path), "--db", db])

    assert result.exit_code == 2
    assert "would expire after the year 9999" in result.stderr
    assert runner.invoke(cli, ["audit", "--db", db]).stdout.startswith("no decisions stored")


def test_replay_warns_of_a_reader_no_agent_of_the_scenario_has(
    runner: CliRunner, travel: dict[str, Any], tmp_path: Path
) -> None:
    """A misspelled reader is stored as given (the store never checks readers against the
    workspace's agents) and makes an item its agents may not read (here A2 could not have
    superseded its own booking without 'booking' beside it): the author of a scenario, who
    lists every agent, is told of it, and the replay goes on."""
    events = travel["events"]
    events[0]["item"]["readers"] = {"principals": ["famliy", "family"]}
    events[1]["item"]["readers"] = {"roles": ["booking", "itinerary", "bookng"]}
    path = tmp_path / "typo.json"
    path.write_text(json.dumps(travel), encoding="utf-8")

    result = runner.invoke(cli, ["replay", str(path), "--json"])

    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert said == [
        "warning: event 'e0': item 'c': readers.principals names 'famliy', which no agent of "
        "the scenario has (did you mean 'family'?)",
        "warning: event 'e1': item 'h0': readers.roles names 'bookng', which no agent of the "
        "scenario has (did you mean 'booking'?)",
    ]


def test_replay_of_the_travel_case_warns_of_nothing(runner: CliRunner, scenario_file: Path) -> None:
    result = runner.invoke(cli, ["replay", str(scenario_file), "--json"])

    assert result.exit_code == 0, result.output
    assert "warning:" not in result.stderr
