"""Signers: HMAC-SHA256 and Ed25519 (public verification), and the CLI's key handling."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from builders import NOW
from readmit.admission.view import verify_view
from readmit.cli import cli
from readmit.config import new_ed25519_keys, signer_from_env, verifier_from_env
from readmit.errors import ConfigError, ViewRejected
from readmit.signing import Ed25519Signer, Ed25519Verifier, HmacSha256Signer


def test_ed25519_signatures_verify_with_the_public_key_only() -> None:
    signer = Ed25519Signer(b"\x01" * 32)
    public = Ed25519Verifier(signer.public_key())

    signature = signer.sign(b"view")

    assert public.verify(b"view", signature)
    assert not public.verify(b"view!", signature)
    assert not Ed25519Verifier(Ed25519Signer(b"\x02" * 32).public_key()).verify(b"view", signature)
    with pytest.raises(ConfigError, match="cannot sign"):
        public.sign(b"view")


def test_keys_from_the_environment() -> None:
    private, public = new_ed25519_keys()

    signer = signer_from_env({"READMIT_SIGNING_KEY": private}, allow_ephemeral=False).signer
    checker = verifier_from_env({"READMIT_VERIFY_KEY": public})

    assert checker.verify(b"x", signer.sign(b"x"))
    assert isinstance(
        signer_from_env({"READMIT_SIGNING_KEY": "s" * 20}, allow_ephemeral=False).signer,
        HmacSha256Signer,
    )
    with pytest.raises(ConfigError):
        verifier_from_env({"READMIT_VERIFY_KEY": "not-ed25519"})
    with pytest.raises(ConfigError):
        Ed25519Signer(b"short")


def test_a_view_signed_with_ed25519_verifies_publicly(
    tmp_path: Path, travel: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    private, public = new_ed25519_keys()
    monkeypatch.setenv("READMIT_SIGNING_KEY", private)
    path = tmp_path / "trip.json"
    path.write_text(json.dumps(travel), encoding="utf-8")
    runner = CliRunner()
    out = json.loads(runner.invoke(cli, ["replay", str(path), "--json"]).stdout)
    view_path = tmp_path / "view.json"
    view_path.write_text(json.dumps(out["decisions"][1]), encoding="utf-8")
    monkeypatch.delenv("READMIT_SIGNING_KEY")
    monkeypatch.setenv("READMIT_VERIFY_KEY", public)

    result = runner.invoke(cli, ["verify", str(view_path), "--at", "2026-05-03T14:10:00Z"])

    assert result.exit_code == 0, result.output
    assert out["decisions"][1]["view"]["signature"]["alg"] == "ed25519"
    with pytest.raises(ViewRejected):
        verify_view(out["decisions"][1]["view"], HmacSha256Signer(b"k" * 32), NOW)


def test_keys_signing_prints_a_pair() -> None:
    result = CliRunner().invoke(cli, ["keys", "signing"])

    assert result.exit_code == 0
    assert result.output.count("ed25519:") == 2
