"""What a person reads first of a body the API schema refused (a 422 ``invalid_request``).

FastAPI lists every problem (``details``); the message names the one that says what to
do: the JSON that did not parse, the Content-Type a body came with, the shape the route
takes, the field a misspelled one meant, or the first problem where it is.
"""

from collections.abc import Sequence
from typing import Any

from fastapi import Request
from pydantic import BaseModel

from readmit.service.schemas import DepartIn, EventsIn, MemoryIn, ReturnIn, VerifyIn
from readmit.service.strict_route import json_type, not_json
from readmit.wire.edge import did_you_mean


def schema_problem(request: Request, errors: Sequence[Any], details: list[dict[str, Any]]) -> str:
    """What a person reads first of a body the API schema refused: its first problem."""
    message = "the request does not match the API schema"
    sent = request.headers.get("content-type", "")
    first = errors[0] if errors else {}
    model, shape = _BODIES.get(request.url.path, (None, None))
    if first.get("type") == "json_invalid":
        why, at = first.get("ctx", {}).get("error", "not JSON"), first["loc"][-1]
        return not_json(why, at)
    reads_any = request.url.path == "/v1/verify"  # it parses whatever the Content-Type
    if details and details[0]["loc"] == ["body"] and not json_type(sent) and not reads_any:
        # A body that is not JSON reaches the schema as no object at all: say why.
        got = f"Content-Type: {sent[:80]}" if sent else "no Content-Type"
        return (
            f"{message}: send the body as JSON with the header Content-Type: "
            f"application/json (it came with {got})"
        )
    not_an_object = first.get("type") in (
        "missing",
        "model_attributes_type",
        "dict_type",
        "model_type",
    )
    if details and details[0]["loc"] == ["body"] and not_an_object and shape is not None:
        return f"{message}: the body must be one JSON object, {shape}"
    extra = [e["loc"][1] for e in errors if e["type"] == "extra_forbidden" and len(e["loc"]) == 2]
    hint = did_you_mean(extra[0], model.model_fields) if extra and model is not None else None
    if hint:  # a misspelled field: it also shows as the field it meant, missing
        return f"{message}: {extra[0]}: Extra inputs are not permitted ({hint})"
    missing = {e["loc"][1] for e in errors if e["type"] == "missing" and len(e["loc"]) == 2}
    if extra and missing and model is not None and missing >= _required(model):
        # a body of another shape (one event, bare): none of the fields the route requires
        held = ", ".join(map(repr, extra[:3])) + (", ..." if len(extra) > 3 else "")
        return f"{message}: the body must be one JSON object, {shape} (it held {held})"
    if details:  # the first problem, where it is
        where = ".".join(str(part) for part in details[0]["loc"][1:]) or "body"
        return f"{message}: {where}: {details[0]['msg']}"
    return message


def _required(model: type[BaseModel]) -> set[str]:
    """The top-level fields a body of ``model`` must hold, as a validation error names them."""
    return {f.alias or name for name, f in model.model_fields.items() if f.is_required()}


_BODIES: dict[str, tuple[type[BaseModel], str]] = {
    "/v1/events": (EventsIn, '{"events": [event, ...]}'),
    "/v1/memories": (MemoryIn, '{"id", "text", "source"}'),
    "/v1/depart": (DepartIn, '{"at", "task", "purpose"} (each optional)'),
    "/v1/return": (ReturnIn, '{"task", "purpose"} (optional, together)'),
    "/v1/verify": (VerifyIn, '{"view": <the view>}'),
}
"""The body each route takes: for a misspelled field, and a body that is no JSON object."""
