"""The API reference page of ``make dev`` (issue 32): ``GET /docs`` through the local gateway is a page that loads only
files this gateway serves (vendored Swagger UI, pinned), and the document it renders."""

from __future__ import annotations

import hashlib
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from html.parser import HTMLParser

import pytest

from local_runtime.api_reference import ASSETS, SWAGGER_UI_VERSION
from local_runtime.gateway import HandlerRegistry, make_server
from local_runtime.template_routes import http_routes, load_template
from tests.support.handlers import ROOT


@pytest.fixture(scope='module')
def base() -> Iterator[str]:
    server = make_server('127.0.0.1', 0, http_routes(load_template(ROOT / 'template.yaml'), ROOT), HandlerRegistry())
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f'http://127.0.0.1:{server.server_address[1]}'
    server.shutdown()
    server.server_close()


def get(url: str, method: str = 'GET') -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


class Links(HTMLParser):
    """Every URL the page loads: script sources, stylesheets, icons, images."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [value for name, value in attrs if name in ('src', 'href') and value]


def test_docs_is_a_page_that_loads_only_local_files_and_each_is_served(base: str) -> None:
    # Given make dev's gateway, When /docs is fetched
    code, headers, body = get(f'{base}/docs')
    # Then it is HTML whose every script, stylesheet and icon is a path on this server, and its policy allows no other
    assert code == 200 and headers['content-type'].startswith('text/html'), (code, body[:200])
    links = Links()
    links.feed(body.decode())
    assert links.urls and all(url.startswith('/') and not url.startswith('//') for url in links.urls), links.urls
    assert "default-src 'self'" in headers['content-security-policy'] and 'http' not in headers['content-security-policy']
    # And each of them is served, with its type
    types = {}
    for url in links.urls:
        code, headers, asset = get(base + url)
        assert code == 200 and asset, url
        types[url.rsplit('/', 1)[1]] = headers['content-type'].split(';')[0]
    assert types == {'swagger-ui.css': 'text/css', 'favicon-32x32.png': 'image/png', 'swagger-ui-bundle.js': 'text/javascript',
                     'init.js': 'text/javascript'}  # fmt: skip


def test_the_page_renders_the_served_document_with_the_pinned_viewer(base: str) -> None:
    # Given the page's configuration and the viewer it loads
    _, _, init = get(f'{base}/docs/init.js')
    _, _, bundle = get(f'{base}/docs/swagger-ui-bundle.js')
    # Then the viewer is the pinned Swagger UI, told not to call its online validator, and the document it names is served
    assert f'PACKAGE_VERSION:"{SWAGGER_UI_VERSION}"'.encode() in bundle
    assert b'validatorUrl: null' in init
    document_url = re.search(rb"url: '([^']+)'", init)
    assert document_url is not None and document_url.group(1) == b'/api/v1/openapi.json'
    code, headers, document = get(f'{base}/api/v1/openapi.json')
    assert code == 200 and headers['content-type'] == 'application/json' and b'"openapi": "3.1.0"' in document


def test_only_the_pages_own_files_are_served(base: str) -> None:
    # Given files next to the viewer that are not part of the page, and a path that climbs out, When they are fetched,
    # Then each is the gateway's usual 404, and so is a POST to the page
    for path in ('/docs/README.md', '/docs/LICENSE', '/docs/../template.yaml', '/docs/%2e%2e/template.yaml', '/docsx'):
        assert get(base + path)[0] == 404, path
    assert get(f'{base}/docs', method='POST')[0] == 404


def test_the_vendored_files_are_the_ones_recorded() -> None:
    # Given the hashes the vendored folder's README records, When the files are hashed, Then they match
    recorded = dict(re.findall(r'^([0-9a-f]{64})  (\S+)$', (ASSETS / 'README.md').read_text(encoding='utf-8'), re.MULTILINE))
    assert sorted(recorded.values()) == ['LICENSE', 'NOTICE', 'favicon-32x32.png', 'swagger-ui-bundle.js', 'swagger-ui.css']
    assert {name: hashlib.sha256((ASSETS / name).read_bytes()).hexdigest() for name in recorded.values()} == {
        name: digest for digest, name in recorded.items()
    }
    assert f'**{SWAGGER_UI_VERSION}**' in (ASSETS / 'README.md').read_text(encoding='utf-8')
