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


def _variants(signature: str) -> dict[str, str]:
    """Encodings of the same bytes (or near them) that a lax decoder would still accept."""
    raw = signature.rstrip("=")
    standard = signature.replace("-", "+").replace("_", "/")
    return {
        "trailing newline": signature + "\n",
        "trailing space": signature + " ",
        "leading space": " " + signature,
        "extra character": signature + "A",
        "junk inside": signature[:10] + "!" + signature[10:],
        "no padding": raw,
        "extra padding": signature + "==",
        "padding inside": raw[:8] + "=" + raw[8:] + "=" * (len(signature) - len(raw)),
        "standard alphabet": standard,
        "flipped last bits": raw[:-1] + chr(ord(raw[-1]) ^ 1) + signature[len(raw) :],
        "non-ascii": signature + "é",
        "empty": "",
    }


def _ed25519_signature_with_alphabet_difference() -> tuple[Ed25519Signer, bytes, str]:
    """A signature whose URL-safe encoding has a '-' or '_', so the other alphabet differs."""
    signer = Ed25519Signer(b"\x03" * 32)
    for n in range(1000):
        data = f"view {n}".encode()
        signature = signer.sign(data)
        if "-" in signature or "_" in signature:
            return signer, data, signature
    raise AssertionError("no signature with - or _ found")


def test_only_the_canonical_ed25519_signature_string_verifies() -> None:
    signer, data, signature = _ed25519_signature_with_alphabet_difference()
    public = Ed25519Verifier(signer.public_key())

    accepted = {name: public.verify(data, v) for name, v in _variants(signature).items()}

    assert public.verify(data, signature)
    assert not any(accepted.values()), accepted


def test_only_the_canonical_hmac_signature_string_verifies() -> None:
    signer = HmacSha256Signer(b"k" * 32)
    signature = signer.sign(b"view")
    variants = {
        "upper case": signature.upper(),
        "trailing newline": signature + "\n",
        "0x prefix": "0x" + signature,
        "truncated": signature[:-2],
        "non-ascii": signature[:-1] + "é",
        "not a string": 7,
    }

    accepted = {name: signer.verify(b"view", v) for name, v in variants.items()}  # type: ignore[arg-type]

    assert signer.verify(b"view", signature)
    assert not any(accepted.values()), accepted


@pytest.mark.parametrize(
    "value",
    [
        "ed25519:!!!",
        "ed25519:AAAA",
        "ed25519:",
        "ed25519:" + "A" * 43,
        "ed25519:" + "A" * 43 + "=\n",
        "ed25519:" + "A" * 44 + "==",
    ],
)
def test_a_malformed_verify_key_is_a_config_error_naming_the_variable(value: str) -> None:
    with pytest.raises(ConfigError, match="READMIT_VERIFY_KEY"):
        verifier_from_env({"READMIT_VERIFY_KEY": value})


@pytest.mark.parametrize("value", ["ed25519:!!!", "ed25519:AAAA", "ed25519:" + "A" * 43])
def test_a_malformed_ed25519_signing_key_is_a_config_error_naming_the_variable(value: str) -> None:
    with pytest.raises(ConfigError, match="READMIT_SIGNING_KEY"):
        signer_from_env({"READMIT_SIGNING_KEY": value}, allow_ephemeral=False)


def test_an_ed25519_public_key_must_be_32_bytes() -> None:
    with pytest.raises(ConfigError, match="32 bytes"):
        Ed25519Verifier(b"short")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("short", "at least 16 bytes"),
        (" " * 32, "at least 16 bytes, not counting spaces"),
        ("\n  0123456789  \t\n", "at least 16 bytes"),
        ("change-me-to-a-long-secret", "is a placeholder: make a secret of your own"),
        ("CHANGE-ME-please-0123456789", "is a placeholder"),
        ("<the same secret as the server's>", "is a placeholder"),
        ("change-me-to-a-long-secret", "make a secret of your own"),
    ],
)
def test_a_short_hmac_key_is_a_config_error_naming_the_variable(value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=f"READMIT_SIGNING_KEY.*{message}"):
        signer_from_env({"READMIT_SIGNING_KEY": value}, allow_ephemeral=False)


def test_a_non_utf8_hmac_key_signs_with_its_bytes() -> None:
    value = b"key-\xff-0123456789abcdef".decode("utf-8", "surrogateescape")

    signer = signer_from_env({"READMIT_SIGNING_KEY": value}, allow_ephemeral=False).signer

    assert signer.verify(b"x", HmacSha256Signer(b"key-\xff-0123456789abcdef").sign(b"x"))
