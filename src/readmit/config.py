"""Settings for the CLI (and later the service), built once at the edge from the environment.

The library itself reads no environment. Precedence: command-line flag >
``READMIT_*`` environment variable > default.
"""

import base64
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from readmit.errors import ConfigError
from readmit.signing import (
    ED25519_KEY_BYTES,
    MIN_KEY_BYTES,
    Ed25519Signer,
    Ed25519Verifier,
    HmacSha256Signer,
    Signer,
    b64url_decode,
)

SIGNING_KEY_ENV = "READMIT_SIGNING_KEY"
VERIFY_KEY_ENV = "READMIT_VERIFY_KEY"
ED25519 = "ed25519:"
DB_ENV = "READMIT_DB"
EMBEDDINGS_ENV = "READMIT_EMBEDDINGS"
"""The scanner's embedder spec when ``--embeddings`` is not given (default: none)."""


@dataclass(frozen=True, slots=True)
class SignerChoice:
    """The signer to use and whether its key is a throwaway one."""

    signer: Signer
    ephemeral: bool


def _ed25519_key(text: str, name: str) -> bytes:
    """The 32 key bytes after ``ed25519:``, or a `ConfigError` naming the variable."""
    key = b64url_decode(text.removeprefix(ED25519))
    if key is None:
        raise ConfigError(
            f"{name}: the key after 'ed25519:' is not URL-safe base64 "
            "as 'readmit keys signing' prints it"
        )
    if len(key) != ED25519_KEY_BYTES:
        raise ConfigError(
            f"{name}: an Ed25519 key is {ED25519_KEY_BYTES} bytes, this one is {len(key)}"
        )
    return key


def signer_from_env(env: Mapping[str, str], *, allow_ephemeral: bool) -> SignerChoice:
    """The signer keyed by ``READMIT_SIGNING_KEY``, or a random HMAC key when allowed.

    ``ed25519:<base64 private key>`` selects Ed25519 (views anyone can verify with the
    public key); any other value is an HMAC-SHA256 secret.

    Raises:
        ConfigError: if the key is malformed, too short or a placeholder (``change-me…``),
            or unset and a throwaway key is not allowed.
    """
    key = env.get(SIGNING_KEY_ENV)
    if key and key.startswith(ED25519):
        seed = _ed25519_key(key, SIGNING_KEY_ENV)
        return SignerChoice(Ed25519Signer(seed), ephemeral=False)
    if key:
        # surrogateescape gives back the bytes of a non-UTF-8 environment value
        secret = key.encode("utf-8", "surrogateescape")
        if len(secret.strip()) < MIN_KEY_BYTES:  # spaces alone are no secret
            raise ConfigError(
                f"{SIGNING_KEY_ENV}: an HMAC key is at least {MIN_KEY_BYTES} bytes, not counting "
                "spaces and line ends around it"
            )
        if secret.lower().startswith(b"change-me") or secret in _PLACEHOLDERS:
            raise ConfigError(
                f"{SIGNING_KEY_ENV} is a placeholder: make a secret of your own (python3 -c "
                "'import secrets; print(secrets.token_urlsafe(32))'), or an Ed25519 pair "
                "with 'readmit keys signing'"
            )
        return SignerChoice(HmacSha256Signer(secret), ephemeral=False)
    if not allow_ephemeral:
        raise ConfigError(
            f"set {SIGNING_KEY_ENV} to the key views are signed with: a secret of at least "
            f"{MIN_KEY_BYTES} bytes, or ed25519:<private key> from 'readmit keys signing'"
        )
    return SignerChoice(HmacSha256Signer(secrets.token_bytes(32)), ephemeral=True)


_PLACEHOLDERS = frozenset({b"<the same secret as the server's>"})
"""Placeholders the docs show for a secret, refused as one (with those starting ``change-me``)."""


def verifier_from_env(env: Mapping[str, str]) -> Signer:
    """What checks a view's signature.

    ``READMIT_VERIFY_KEY`` (``ed25519:<base64 public key>``) if set, else the signing key.

    Raises:
        ConfigError: if neither is usable.
    """
    public = env.get(VERIFY_KEY_ENV)
    if public:
        if not public.startswith(ED25519):
            raise ConfigError(f"{VERIFY_KEY_ENV} must be ed25519:<base64 public key>")
        return Ed25519Verifier(_ed25519_key(public, VERIFY_KEY_ENV))
    if not env.get(SIGNING_KEY_ENV):
        raise ConfigError(
            f"set {SIGNING_KEY_ENV} (or {VERIFY_KEY_ENV} for an Ed25519 public "
            "key) to the key the view was signed with"
        )
    return signer_from_env(env, allow_ephemeral=False).signer


def new_ed25519_keys() -> tuple[str, str]:
    """A fresh (``READMIT_SIGNING_KEY``, ``READMIT_VERIFY_KEY``) pair of values."""
    signer = Ed25519Signer(secrets.token_bytes(32))
    encode = base64.urlsafe_b64encode
    return (ED25519 + encode(signer.seed).decode(), ED25519 + encode(signer.public_key()).decode())
