"""Store URLs and model specs as messages and logs may show them: never with a password."""

from readmit.errors import ConfigError


def shown(text: str) -> str:
    """``text`` (a store URL, a verifier or embedder spec) as a message may quote it.

    Not past its ``//`` when what follows could hold a password: a ``:`` anywhere before
    its last ``@`` (``user:password@``, whatever the password holds), a percent sign, or
    the letters "pass" in any case (libpq reads a password from a query parameter, its
    name encoded or not). Not at all when what comes before could (a libpq
    ``key=value`` string, with or without a ``//`` in it).
    """
    head, sep, rest = text.partition("//")
    if not _may_hold_a_password(rest if sep else text) and not _named(head):
        return text
    return head + "//…" if sep and not _named(head) else "(not shown: it may hold a password)"


def _named(text: str) -> bool:
    """Whether ``text`` could name or hold a password outside a URL's authority."""
    return "%" in text or "=" in text or "pass" in text.lower()


def logged(url: str) -> str:
    """The store ``url`` names, for a log line: never with its password.

    A PostgreSQL URL as libpq reads it, less the password (whatever form it was given
    in); any other as `shown` quotes it.
    """
    if url.startswith(("postgresql://", "postgres://")):
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        params = conninfo_to_dict(url)  # read already, by the store it opened
        params = {k: v for k, v in params.items() if "password" not in k}  # sslpassword too
        return f"PostgreSQL {make_conninfo('', **params)}"
    return shown(url)


def _may_hold_a_password(text: str) -> bool:
    return ":" in text[: text.rfind("@") + 1] or "%" in text or "pass" in text.lower()


def one_at(url: str) -> None:
    """Refuse a URL whose user or password holds a raw ``@``.

    libpq would take the rest of the password for the host, and quote it in its error.

    Raises:
        ConfigError: saying to write it ``%40``.
    """
    authority = url.split("//", 1)[-1].split("/", 1)[0]  # libpq reads on past a "?"
    if authority.count("@") > 1:
        raise ConfigError(
            f"{shown(url)!r}: write an @ in a user or password as %40 (only the last @ may "
            "end them)"
        )


def quotes_password(message: str, url: str, parsed: str = "") -> bool:
    """Whether ``message`` quotes four characters in a row of what could be ``url``'s password.

    That is what follows the user's ``:`` up to the last ``@`` (however a parser then
    split it: libpq stops a password at a raw ``/`` and reads the rest as the port), and
    ``parsed``, the password as a parser read it.
    """
    rest = url.partition("//")[2]
    raw = rest[: rest.rfind("@")].partition(":")[2] if "@" in rest else ""
    return any(
        secret[i : i + 4] in message
        for secret in (raw, " ".join(parsed.split()))
        for i in range(len(secret) - 3)
    )
