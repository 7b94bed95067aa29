"""``/docs``: the API reference, served by the service itself, with no network needed.

FastAPI's own ``/docs`` and ``/redoc`` load their scripts from a CDN, so they are
blank on a machine that cannot reach it. No package that ships the Swagger UI
assets qualified (see docs/security.md, "API reference"), so the service serves
this small page instead: a script renders ``/openapi.json`` (every route, its
request body, its answers and their schemas) in the browser. Everything it needs
comes from this module; its Content-Security-Policy lets it load nothing else.
"""

import html

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""Only this page's own script, style and API description may load."""

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>readmit API</title>
<link rel="stylesheet" href="{root}/docs/reference.css">
<script src="{root}/docs/reference.js" defer></script>
</head>
<body data-openapi="{root}/openapi.json">
<main id="reference"><p>Loading the API description…</p></main>
<noscript>This page renders <a href="{root}/openapi.json">/openapi.json</a>;
it needs JavaScript.</noscript>
</body>
</html>
"""

_STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; margin: 0; color: #1d2330; background: #fbfbfd; }
main { max-width: 60rem; margin: 0 auto; padding: 1.5rem; }
h1 { margin-bottom: 0.2rem; }
h2 { margin-top: 2.5rem; border-bottom: 1px solid #d8dbe3; }
.route { border: 1px solid #d8dbe3; border-radius: 6px; margin: 1rem 0; padding: 0.6rem 1rem;
  background: #fff; }
.method { display: inline-block; min-width: 4.2rem; font-weight: 700; text-transform: uppercase; }
.get { color: #1f6feb; } .post { color: #1a7f37; }
.path { font-family: ui-monospace, monospace; font-weight: 600; }
.status { font-family: ui-monospace, monospace; font-weight: 700; margin-right: 0.4rem; }
.lock { color: #9a6700; font-size: 0.85rem; margin-left: 0.5rem; }
ul.fields { list-style: none; padding-left: 1.2rem; margin: 0.2rem 0; }
.name { font-family: ui-monospace, monospace; }
.type { color: #6639ba; font-family: ui-monospace, monospace; }
.note { color: #57606a; }
a { color: #0b5cad; }
"""

_SCRIPT = r"""
"use strict";
const root = document.body;
const main = document.getElementById("reference");

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function refName(ref) { return ref.split("/").pop(); }

function typeOf(schema) {
  if (!schema || Object.keys(schema).length === 0) return el("span", "any", "type");
  if (schema.$ref) {
    const link = el("a", refName(schema.$ref), "type");
    link.href = "#schema-" + refName(schema.$ref);
    return link;
  }
  const span = el("span", "", "type");
  const alts = schema.anyOf || schema.oneOf;
  if (alts) {
    alts.forEach((alt, i) => {
      if (i) span.append(" | ");
      span.append(typeOf(alt));
    });
  } else if (schema.const !== undefined) {
    span.textContent = JSON.stringify(schema.const);
  } else if (schema.enum) {
    span.textContent = schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  } else if (schema.type === "array") {
    span.append("list of ", typeOf(schema.items));
  } else if (schema.type === "object" && schema.additionalProperties
             && schema.additionalProperties !== true && !schema.properties) {
    span.append("map of ", typeOf(schema.additionalProperties));
  } else {
    span.textContent = schema.type || "any";
  }
  return span;
}

function fields(schema) {
  const list = el("ul", null, "fields");
  const required = new Set(schema.required || []);
  for (const [name, prop] of Object.entries(schema.properties || {})) {
    const row = el("li");
    row.append(el("span", name, "name"), required.has(name) ? ": " : "?: ", typeOf(prop));
    if (prop.description) row.append(el("span", " — " + prop.description, "note"));
    list.append(row);
  }
  return list;
}

function body(title, schema) {
  const part = el("div");
  part.append(el("strong", title + " "), typeOf(schema));
  if (schema && schema.properties) part.append(fields(schema));
  return part;
}

function route(path, method, op) {
  const box = el("section", null, "route");
  const head = el("div");
  head.append(el("span", method, "method " + method), el("span", path, "path"));
  if (op.security && op.security.length) head.append(el("span", "agent key", "lock"));
  box.append(head);
  if (op.summary) box.append(el("p", op.summary));
  if (op.description && op.description !== op.summary) box.append(el("p", op.description, "note"));
  const json = (c) => c && c["application/json"] && c["application/json"].schema;
  if (op.requestBody) box.append(body("Body:", json(op.requestBody.content)));
  const errors = el("div", "Errors: ", "note");
  for (const [status, answer] of Object.entries(op.responses || {})) {
    if (!status.startsWith("2")) {
      const link = el("a", status, "status");
      link.href = "#error-" + status;
      errors.append(link);
      continue;
    }
    const line = el("div");
    line.append(el("span", status, "status"), answer.description || "");
    const schema = json(answer.content);
    if (schema) line.append(" ", typeOf(schema));
    box.append(line);
  }
  if (errors.childElementCount) box.append(errors);
  return box;
}

function errorList(paths) {
  const list = el("ul", null, "fields");
  const seen = new Set();
  for (const item of Object.values(paths)) {
    for (const op of Object.values(item)) {
      for (const [status, answer] of Object.entries(op.responses || {})) {
        if (status.startsWith("2") || seen.has(status)) continue;
        seen.add(status);
        const row = el("li");
        row.id = "error-" + status;
        row.append(el("span", status, "status"), answer.description || "");
        list.append(row);
      }
    }
  }
  return list;
}

function schemas(all) {
  const part = el("div");
  for (const [name, schema] of Object.entries(all)) {
    const box = el("section", null, "route");
    box.id = "schema-" + name;
    box.append(el("span", name, "path"));
    if (schema.description) box.append(el("p", schema.description, "note"));
    box.append(schema.properties ? fields(schema) : typeOf(schema));
    part.append(box);
  }
  return part;
}

function render(api) {
  main.replaceChildren(el("h1", api.info.title + " " + api.info.version));
  if (api.info.description) main.append(el("p", api.info.description));
  const raw = el("a", "The OpenAPI description as JSON");
  raw.href = root.dataset.openapi;
  main.append(raw, el("h2", "Routes"));
  for (const [path, item] of Object.entries(api.paths)) {
    for (const [method, op] of Object.entries(item)) main.append(route(path, method, op));
  }
  main.append(el("h2", "Errors"), el("p", "Every error is an ErrorOut: a stable code, "
    + "a message and details. Bad input stores nothing.", "note"), errorList(api.paths));
  main.append(el("h2", "Schemas"), schemas((api.components || {}).schemas || {}));
}

fetch(root.dataset.openapi)
  .then((answer) => answer.json())
  .then(render)
  .catch((error) => main.replaceChildren(el("p", "Could not load the API description: " + error)));
"""


def add_reference(app: FastAPI) -> None:
    """Serve the offline API reference at ``/docs`` (its script and style under it)."""

    @app.get("/docs", include_in_schema=False)
    def reference(request: Request) -> HTMLResponse:
        root = html.escape(request.scope.get("root_path", "").rstrip("/"), quote=True)
        return HTMLResponse(_PAGE.format(root=root), headers={"Content-Security-Policy": CSP})

    @app.get("/docs/reference.js", include_in_schema=False)
    def script() -> Response:
        return Response(_SCRIPT, media_type="text/javascript; charset=utf-8")

    @app.get("/docs/reference.css", include_in_schema=False)
    def style() -> Response:
        return Response(_STYLE, media_type="text/css; charset=utf-8")
