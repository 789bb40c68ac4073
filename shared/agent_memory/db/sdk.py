"""The SurrealDB SDK without its package ``__init__`` (which imports ``aiohttp`` and ``requests`` for HTTP
transports): only the transport the configured URL needs is imported (``agent_memory.lazy_package``)."""

from __future__ import annotations

import importlib
from typing import Any

from agent_memory.lazy_package import defer_package_init

defer_package_init('surrealdb')

import surrealdb.connections.blocking_ws as blocking_ws  # noqa: E402  # the ws transport; the embedded one subclasses it
from surrealdb.connections.url import Url, UrlScheme  # noqa: E402
from surrealdb.data.types.record_id import RecordID  # noqa: E402
from surrealdb.errors import SurrealError, UnsupportedEngineError  # noqa: E402

from agent_memory.db import vector_wire  # noqa: E402

vector_wire.install()

_EMBEDDED = {UrlScheme.MEM, UrlScheme.MEMORY, UrlScheme.FILE, UrlScheme.SURREALKV, UrlScheme.SURREALKV_VERSIONED}


def connect(url: str) -> Any:
    """A blocking connection to ``url``: the transport ``surrealdb.Surreal`` would pick for its scheme."""
    scheme = Url(url).scheme
    if scheme in _EMBEDDED:
        module, cls = 'blocking_embedded', 'BlockingEmbeddedSurrealConnection'
    elif scheme in (UrlScheme.WS, UrlScheme.WSS):
        module, cls = 'blocking_ws', 'BlockingWsSurrealConnection'
    elif scheme in (UrlScheme.HTTP, UrlScheme.HTTPS):
        module, cls = 'blocking_http', 'BlockingHttpSurrealConnection'
    else:
        raise UnsupportedEngineError(url)
    return getattr(importlib.import_module(f'surrealdb.connections.{module}'), cls)(url=url)


__all__ = ['RecordID', 'SurrealError', 'blocking_ws', 'connect']
