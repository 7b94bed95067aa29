"""``/docs`` works with no network: the page and everything it loads come from the service."""

import re

import httpx

EXTERNAL = re.compile(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", re.IGNORECASE)


def assets(page: str) -> list[str]:
    return re.findall(r'(?:src|href)="([^"]+)"', page)


def test_the_docs_page_and_its_assets_name_no_external_url(client: httpx.Client) -> None:
    page = client.get("/docs")

    loaded = [client.get(url) for url in assets(page.text)]

    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert [r.status_code for r in loaded] == [200] * len(loaded)
    for text in [page.text, *(r.text for r in loaded if "json" not in r.headers["content-type"])]:
        assert EXTERNAL.search(text) is None


def test_the_docs_page_loads_its_script_its_style_and_the_api_description(
    client: httpx.Client,
) -> None:
    page = client.get("/docs").text

    kinds = {url: client.get(url).headers["content-type"] for url in assets(page)}

    assert kinds == {
        "/docs/reference.css": "text/css; charset=utf-8",
        "/docs/reference.js": "text/javascript; charset=utf-8",
        "/openapi.json": "application/json",
    }
    assert 'data-openapi="/openapi.json"' in page


def test_the_docs_page_may_load_nothing_from_elsewhere(client: httpx.Client) -> None:
    policy = client.get("/docs").headers["content-security-policy"]

    assert "default-src 'none'" in policy
    assert "script-src 'self'" in policy
    assert "connect-src 'self'" in policy


def test_the_cdn_pages_fastapi_would_serve_are_gone(client: httpx.Client) -> None:
    assert client.get("/redoc").status_code == 404
    assert client.get("/docs/oauth2-redirect").status_code == 404
