"""Signers for Return Views: HMAC-SHA256 with a shared key, or Ed25519 for public verifiers.

Signature strings are not malleable: each signer accepts exactly the string it
would write (lower-case hex for HMAC, padded URL-safe base64 for Ed25519), so
one signature has one spelling and a view that verifies cannot be re-spelled.
"""

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from readmit.errors import ConfigError, install_hint

MIN_KEY_BYTES = 16
ED25519_KEY_BYTES = 32
_HEX_SHA256 = re.compile(r"[0-9a-f]{64}")
_B64URL = re.compile(r"(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}==|[A-Za-z0-9_-]{3}=)?")


def _is_hex_sha256(text: object) -> bool:
    """Whether ``text`` is a SHA-256 digest as `hexdigest` writes it (64 lower-case hex digits)."""
    return isinstance(text, str) and _HEX_SHA256.fullmatch(text) is not None


def b64url_decode(text: object) -> bytes | None:
    """Decode ``text`` only if it is exactly what `base64.urlsafe_b64encode` writes.

    Lax decoders skip unknown characters, accept the other alphabet, missing or
    extra padding and non-zero trailing bits, so several strings decode to the
    same bytes; this returns None for all of them but the canonical one.
    """
    if not isinstance(text, str) or _B64URL.fullmatch(text) is None:
        return None
    raw = base64.urlsafe_b64decode(text)
    return raw if base64.urlsafe_b64encode(raw).decode("ascii") == text else None


@runtime_checkable
class Signer(Protocol):
    """Signs and verifies the canonical bytes of a Return View."""

    @property
    def alg(self) -> str:
        """Algorithm name written into the view's signature block."""
        ...

    def sign(self, data: bytes) -> str:
        """Return the signature of ``data`` as text."""
        ...

    def verify(self, data: bytes, signature: str) -> bool:
        """Whether ``signature`` is this signer's signature of ``data``."""
        ...


@dataclass(frozen=True, slots=True)
class HmacSha256Signer:
    """HMAC-SHA256 over the view's canonical JSON; the key never appears in ``repr``."""

    key: bytes = field(repr=False)

    def __post_init__(self) -> None:
        key: object = self.key  # typed bytes, but a library caller may pass a str
        if isinstance(key, bytearray | memoryview):
            object.__setattr__(self, "key", bytes(key))
        elif not isinstance(key, bytes):
            got = type(key).__name__
            raise ConfigError(f"the signing key must be bytes, not {got} (e.g. key.encode())")
        if len(self.key) < MIN_KEY_BYTES:
            raise ConfigError(f"the signing key must be at least {MIN_KEY_BYTES} bytes long")

    @property
    def alg(self) -> str:
        return "hmac-sha256"

    def sign(self, data: bytes) -> str:
        return hmac.new(self.key, data, hashlib.sha256).hexdigest()

    def verify(self, data: bytes, signature: str) -> bool:
        if not _is_hex_sha256(signature):
            return False
        return hmac.compare_digest(self.sign(data), signature)


def _ed25519() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError as exc:  # tests/cli/test_install_paths.py, without the extra
        raise ConfigError(f"Ed25519 signing needs cryptography: {install_hint('ed25519')}") from exc
    return ed25519


@dataclass(frozen=True, slots=True)
class Ed25519Signer:
    """Ed25519 signatures, so anyone holding the public key can verify a view."""

    seed: bytes = field(repr=False)
    """The 32-byte private key."""

    def __post_init__(self) -> None:
        if len(self.seed) != ED25519_KEY_BYTES:
            raise ConfigError(f"an Ed25519 private key is {ED25519_KEY_BYTES} bytes")
        _ed25519()  # missing, said now: not at the first view signed, mid-command

    @property
    def alg(self) -> str:
        return "ed25519"

    def _key(self) -> Any:
        return _ed25519().Ed25519PrivateKey.from_private_bytes(self.seed)

    def public_key(self) -> bytes:
        """The 32-byte public key that verifies this signer's views."""
        raw: bytes = self._key().public_key().public_bytes_raw()
        return raw

    def sign(self, data: bytes) -> str:
        return base64.urlsafe_b64encode(self._key().sign(data)).decode("ascii")

    def verify(self, data: bytes, signature: str) -> bool:
        return Ed25519Verifier(self.public_key()).verify(data, signature)


@dataclass(frozen=True, slots=True)
class Ed25519Verifier:
    """Verifies Ed25519-signed views with a public key; it cannot sign."""

    public: bytes

    def __post_init__(self) -> None:
        if len(self.public) != ED25519_KEY_BYTES:
            raise ConfigError(f"an Ed25519 public key is {ED25519_KEY_BYTES} bytes")
        _ed25519()  # missing, said now: not as a view that fails to verify

    @property
    def alg(self) -> str:
        return "ed25519"

    def sign(self, data: bytes) -> str:
        raise ConfigError("a public key verifies views; it cannot sign them")

    def verify(self, data: bytes, signature: str) -> bool:
        ed25519 = _ed25519()
        from cryptography.exceptions import InvalidSignature

        raw = b64url_decode(signature)
        if raw is None or len(raw) != 64:
            return False
        try:
            key = ed25519.Ed25519PublicKey.from_public_bytes(self.public)
            key.verify(raw, data)
        except (InvalidSignature, ValueError):
            return False
        return True
