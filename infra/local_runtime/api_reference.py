"""The API reference page under ``make dev``: ``GET /docs`` renders the OpenAPI document (``/api/v1/openapi.json``) with
Swagger UI, from files vendored in ``swagger-ui/`` (version, license and hashes in its README), never a CDN.

Only the local gateway serves it; API Gateway routes only template.yaml's routes, so a deployment has the document but
not the page.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

SWAGGER_UI_VERSION = '5.36.0'
ASSETS = Path(__file__).with_name('swagger-ui')
PAGE = '/docs'
_TYPES = {
    'index.html': 'text/html; charset=utf-8',
    'init.js': 'text/javascript; charset=utf-8',
    'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
    'swagger-ui.css': 'text/css; charset=utf-8',
    'favicon-32x32.png': 'image/png',
}
# What the page may load: its own files, the document and "Try it out" requests on this origin, the inline styles and
# data: images Swagger UI draws with. A file that tried to reach anywhere else would be blocked by the browser.
_POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; frame-ancestors 'none'"


@cache
def _read(name: str) -> bytes:
    return (ASSETS / name).read_bytes()


def serve(method: str, path: str) -> tuple[int, dict[str, str], bytes] | None:
    """The page (``/docs``) or one of its files (``/docs/<file>``) for a GET, else None: not ours to answer."""
    if method != 'GET':
        return None
    name = 'index.html' if path in (PAGE, f'{PAGE}/') else path.removeprefix(f'{PAGE}/') if path.startswith(f'{PAGE}/') else None
    if name not in _TYPES:
        return None
    headers = {'content-type': _TYPES[name], 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff'}
    if name == 'index.html':
        headers['content-security-policy'] = _POLICY
    return 200, headers, _read(name)
