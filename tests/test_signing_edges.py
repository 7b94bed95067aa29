"""Signers' edges: the shortest HMAC key, an Ed25519 seed of the wrong length, and a base64
signature re-spelled in its padding bits."""

import base64
import string

import pytest

from readmit.errors import ConfigError
from readmit.signing import (
    MIN_KEY_BYTES,
    Ed25519Signer,
    Ed25519Verifier,
    HmacSha256Signer,
    b64url_decode,
)

_ALPHABET = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"


def test_an_hmac_key_one_byte_short_of_the_least_is_refused() -> None:
    least = HmacSha256Signer(b"k" * MIN_KEY_BYTES)
    assert least.verify(b"view", least.sign(b"view"))

    with pytest.raises(ConfigError, match=f"at least {MIN_KEY_BYTES} bytes"):
        HmacSha256Signer(b"k" * (MIN_KEY_BYTES - 1))


@pytest.mark.parametrize("size", [0, 31, 33, 64])
def test_an_ed25519_seed_of_any_length_but_32_bytes_is_refused_when_made(size: int) -> None:
    with pytest.raises(ConfigError, match="an Ed25519 private key is 32 bytes"):
        Ed25519Signer(b"\x01" * size)


def _padding_bits_set(signature: str) -> str:
    """``signature`` (64 bytes, so 86 characters and ``==``) with a padding bit set: it
    decodes to the same bytes, but it is not what the encoder writes."""
    assert len(signature) == 88
    assert signature.endswith("==")
    last = _ALPHABET.index(signature[-3])
    assert last % 16 == 0  # the encoder leaves the 4 bits past the 512th at zero
    return signature[:-3] + _ALPHABET[last | 1] + "=="


def test_a_signature_re_spelled_in_its_padding_bits_does_not_verify() -> None:
    signer = Ed25519Signer(b"\x01" * 32)
    signature = signer.sign(b"view")
    respelled = _padding_bits_set(signature)
    assert base64.urlsafe_b64decode(respelled) == base64.urlsafe_b64decode(signature)

    assert b64url_decode(signature) == base64.urlsafe_b64decode(signature)
    assert b64url_decode(respelled) is None
    assert Ed25519Verifier(signer.public_key()).verify(b"view", signature)
    assert not Ed25519Verifier(signer.public_key()).verify(b"view", respelled)
    assert not signer.verify(b"view", respelled)


def test_an_hmac_signature_wrong_only_in_its_last_digit_does_not_verify() -> None:
    signer = HmacSha256Signer(b"k" * 32)
    signature = signer.sign(b"view")

    for forged in (
        signature[:-1] + ("1" if signature[-1] == "0" else "0"),
        signature[:32] + "0" * 32,
    ):
        assert forged != signature
        assert not signer.verify(b"view", forged)
