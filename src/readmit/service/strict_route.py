"""Agents' JSON bodies may not repeat a key.

FastAPI reads a body with ``json.loads``, which keeps the last of a repeated key: an
event sent as ``{"author": "A2", "author": "A1"}`` was recorded as A1's, and a gateway
or audit tool that reads the first would see another event than the one stored. Every
route with a JSON body checks it first (`StrictJsonRoute`): a repeated key is a 422
``invalid_input`` naming it. It is read to `readmit.strict_json.MAX_DEPTH` levels, and numbers
to `readmit.strict_json.MAX_NUMBER_CHARS` characters, as every JSON readmit reads (no request
needs more than a few levels, or a longer number). What it read is what FastAPI reads: a
body is parsed once. ``/v1/verify`` reads its body itself, strictly (`readmit.strict_json`),
so it is left alone here.
"""

import json
from collections.abc import Callable, Coroutine
from functools import cached_property
from typing import Any, NamedTuple, get_args
from urllib.parse import unquote_to_bytes

from fastapi import Request, Response
from fastapi.routing import APIRoute
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from readmit.errors import InvalidInput, InvalidRequest, LongNumber, NotJson, RepeatedKey, TooDeep
from readmit.service.limits import Limits
from readmit.strict_json import MAX_DEPTH, nests_deeper, parse, utf8
from readmit.wire.edge import did_you_mean
from readmit.wire.fields import name_characters

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class StrictJsonRoute(APIRoute):
    """A route that reads a JSON body as `check_body` does, and hands FastAPI what it read.

    FastAPI's handler takes a JSON body from ``request.json()``, which Starlette parses once
    and keeps (``Request._json``): set here, the body is parsed once, not twice. Were a later
    Starlette to stop keeping it there, FastAPI would parse the body again, to the same
    value (`check_body`'s hooks build what ``json.loads``' defaults do): slower, not wrong.
    """

    @cached_property
    def declared(self) -> "_Declaration":
        """What the route declares of its query, path and body, read at its first request."""
        return _declared(self)

    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()
        if self.body_field is None:  # no body to parse (or one the route reads itself)
            return handler

        async def strict(request: Request) -> Response:
            if json_type(request.headers.get("content-type", "")):
                value = check_body(await request.body())  # kept by the request, as is this:
                limits = getattr(request.app.state, "limits", None)
                check_count(value, None if limits is None else limits())
                request._json = value  # what request.json() returns to FastAPI
            return await handler(request)

        return strict


def check_count(value: Any, limits: Limits | None) -> None:
    """Refuse a body of more events than ``limits`` allow, before the schema reads each one.

    The schema answers every entry that is not an event with an error of its own: an 8 MiB
    body of four million ``1``s took 22–40 s to refuse, and stalled the server meanwhile.
    """
    events = value.get("events") if isinstance(value, dict) else None
    if limits is not None and isinstance(events, list):
        limits.check_events(len(events))


def check_body(body: bytes) -> Any:
    """Read a JSON body, refusing one that repeats a key, nests too deep or has a long number.

    Bytes that are not UTF-8, and text that is not JSON (a byte order mark too), are refused
    as on ``/v1/verify`` and MCP: before, FastAPI read them again its own way, and took
    UTF-16 and a UTF-8 BOM.

    Returns:
        What the body holds. (Lone surrogates are left to the schema, which names the field;
        `readmit.strict_json.loads` would encode every string of the body to find them.)

    Raises:
        RepeatedKey: An object names a key twice (``invalid_input``: it reads two ways).
        InvalidRequest: It is not UTF-8, not JSON, nests past `MAX_DEPTH` levels, or has a
            number longer than `readmit.strict_json.MAX_NUMBER_CHARS` (``invalid_request``,
            as on ``/v1/verify``).
    """
    try:
        text = utf8(body)
        parsed = parse(text)
    except InvalidInput as exc:  # a repeated key; JSON read no further (NaN, a long number)
        raise refusal(exc) from None
    except json.JSONDecodeError as exc:  # FastAPI would read UTF-16, and a BOM
        raise refusal(NotJson(exc)) from None
    except RecursionError:  # nested past what the parser itself can read
        raise refusal(TooDeep(MAX_DEPTH)) from None
    if nests_deeper(parsed):
        raise refusal(TooDeep(MAX_DEPTH))
    return parsed


def refusal(error: InvalidInput, subject: str = "the body") -> InvalidInput:
    """What a route says of ``subject``, JSON that `readmit.strict_json` refused with ``error``.

    A repeated key stays ``invalid_input`` (the document reads two ways). The rest are
    ``invalid_request``: JSON read no further (too deep, a number too long) is said to be
    valid JSON read no further, text that is not JSON is said to be so, and the rest (``NaN``,
    a number out of range, a lone surrogate, bytes that are not UTF-8) is refused, saying why.
    """
    match error:
        case RepeatedKey():
            return error
        case TooDeep(limit=limit):
            return InvalidRequest(
                f"{subject} nests deeper than {limit} levels: JSON is read no deeper here"
            )
        case LongNumber(limit=limit):
            return InvalidRequest(
                f"{subject} has a number longer than {limit} characters: send it as a string"
            )
        case NotJson(problem=problem, at=at):
            return InvalidRequest(not_json(problem, at, subject))
    return InvalidRequest(f"{subject} is refused: {error}")  # JSON, but NaN, 1e400, not UTF-8


def not_json(problem: str, at: int | None = None, subject: str = "the body") -> str:
    """What a route says of ``subject`` that is not JSON: ``problem``, at character ``at``.

    In one wording whoever parsed it: FastAPI (`readmit.service.app`) or `readmit.strict_json`.
    """
    where = "" if at is None else f" (at character {at})"
    return f"{subject} is not valid JSON: {problem}{where}"


def json_type(content_type: str) -> bool:
    """Whether a ``Content-Type`` names JSON (``application/json``, ``…+json``)."""
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def plain_query(
    request: Request,
    known: frozenset[str],
    whole: frozenset[str],
    body: frozenset[str] = frozenset(),
) -> None:
    """Refuse a query string read otherwise than the strict bodies are.

    Each parameter once (FastAPI keeps the last of a repeated one), only ``known`` ones (an
    unknown one is a typo, or meant for another reader), the ``whole`` numbers in digits
    alone (FastAPI reads ``1.0``, ``+5``, `` 5`` and ``1_0`` as numbers), no character
    an id refuses (`readmit.wire.fields.name_characters`: a control or invisible one), and
    UTF-8 once percent-decoded (Starlette puts U+FFFD for what is not, silently). Each was
    read loosely before.

    Raises:
        InvalidRequest: naming the parameter, and where it goes when it is a field of the
            route's JSON ``body``, or the known one it is closest to.
    """
    try:
        unquote_to_bytes(request.scope.get("query_string", b"")).decode()
    except UnicodeDecodeError:
        raise InvalidRequest("query: not UTF-8 once percent-decoded") from None
    seen: set[str] = set()
    for name, value in request.query_params.multi_items():
        if name not in known:
            where = f"; give {name!r} in the JSON body" if name in body else ""
            hint = None if where else did_you_mean(name, known)
            raise InvalidRequest(f"query: unknown parameter {name!r}{where}" + _said(hint))
        if name in seen:
            raise InvalidRequest(f"query: {name!r} is given more than once")
        seen.add(name)
        if name in whole and not _digits(value):
            raise InvalidRequest(f"query: {name!r} must be a whole number in digits")
        if not name_characters(value):
            raise InvalidRequest(f"query: {name!r} holds a control or invisible character")


def routed_query(request: Request) -> None:
    """`plain_query` with the query parameters the request's route declares.

    Each route that takes a key reads its query through this (``POST /v1/return?task=...``
    was answered as a return to the departure's task, the query unread), and its whole
    number path parameters in digits alone (``/v1/decisions/+1`` and ``/1_0`` were read as
    decisions 1 and 10).
    """
    route = request.scope.get("route")
    if isinstance(route, StrictJsonRoute):
        declared = route.declared
    else:
        declared = _declared(route) if isinstance(route, APIRoute) else _NOTHING
    plain_query(request, declared.known, declared.whole, declared.body)
    for name in declared.whole_path:
        if not _digits(str(request.path_params.get(name, ""))):
            raise InvalidRequest(f"path: {name!r} must be a whole number in digits")


class _Declaration(NamedTuple):
    """What a route declares of its query, path and body, read once a route (`_declared`)."""

    known: frozenset[str]
    """Its query parameters."""
    whole: frozenset[str]
    """Of those, the whole numbers."""
    body: frozenset[str]
    """The fields of its JSON body: its body model's, or its documented body's (a route
    reading the body itself, ``/v1/verify``)."""
    whole_path: tuple[str, ...]
    """Its whole-number path parameters."""


_NOTHING = _Declaration(frozenset(), frozenset(), frozenset(), ())


def _declared(route: APIRoute) -> _Declaration:
    """What ``route`` declares (`StrictJsonRoute.declared` keeps it: it never changes)."""
    taken = route.dependant
    query = taken.query_params
    models = [
        m
        for p in taken.body_params
        for m in (p.field_info.annotation, *get_args(p.field_info.annotation))
    ]
    body = {
        f.alias or name
        for model in models
        if isinstance(model, type) and issubclass(model, BaseModel)
        for name, f in model.model_fields.items()
    }
    content = ((route.openapi_extra or {}).get("requestBody") or {}).get("content") or {}
    body.update(
        ((content.get("application/json") or {}).get("schema") or {}).get("properties") or ()
    )
    return _Declaration(
        known=frozenset(p.alias for p in query),
        whole=frozenset(p.alias for p in query if _whole(p.field_info)),
        body=frozenset(body),
        whole_path=tuple(p.alias for p in taken.path_params if _whole(p.field_info)),
    )


def _said(hint: str | None) -> str:
    return "" if hint is None else f" ({hint})"


def _whole(field: FieldInfo) -> bool:
    return field.annotation is int


def _digits(value: str) -> bool:
    return value.isascii() and value.isdigit()
