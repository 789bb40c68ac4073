"""A ws:// SurrealDB endpoint for tests: each binary CBOR RPC frame goes to a real embedded engine.

No SurrealDB server binary is obtainable here, but the embedded engine's ``execute(cbor)`` speaks the same
RPC frames as the ws protocol, so the stock SDK client talks to the real engine through this bridge
(``DEFINE USER … ON ROOT`` + ``signin`` included). The embedded instance has one session shared by every
connection, which is harmless for the service: every query carries its own ``USE NS … DB …``.

Faults a hosted database can show are switches on the bridge: drop every open connection, stop listening
(connections refused), restart (a ``surrealkv://`` engine keeps its data), and delay each frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Coroutine
from typing import Any

from surrealdb_embedded import AsyncEmbeddedDB
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

ROOT_USER = 'root'
ROOT_PASSWORD = 'bridge-root-password'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port: int = s.getsockname()[1]
        return port


class WsBridge:
    def __init__(self, engine_url: str = 'mem://', *, delay_seconds: float = 0.0, serial: bool = True) -> None:
        self.engine_url = engine_url
        self.delay_seconds = delay_seconds
        self.serial = serial  # False: requests of different connections run in the engine at once, as on a server
        self.port = free_port()
        self.frames = 0  # RPC requests received: the service's database round trips
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name='ws-bridge', daemon=True)
        self._thread.start()
        self._engine: Any = None
        self._server: Server | None = None
        # One request at a time reaches the engine: its single shared session stalled under concurrent connections
        # (eight cold starts signing in while another connection ran transactions). Transactions still interleave
        # between requests, which is where concurrent writers conflict.
        self._serial: asyncio.Lock | None = None

    @property
    def url(self) -> str:
        return f'ws://127.0.0.1:{self.port}'

    def start(self) -> WsBridge:
        """Open the engine (creating the root user) and listen; used again after ``stop``."""
        self._run(self._start())
        return self

    def stop(self) -> None:
        """Stop listening, close every connection and the engine (a SurrealKV engine releases its files)."""
        self._run(self._stop())

    def restart(self) -> None:
        self.stop()
        self.start()

    def drop_connections(self) -> None:
        """Abort every open connection at the TCP level, as a lost network path or a proxy timeout would."""
        self._run(self._drop())

    def close(self) -> None:
        self.stop()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    def _run(self, coroutine: Coroutine[Any, Any, None]) -> None:
        asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(30)

    async def _start(self) -> None:
        if self._server is not None:
            return
        self._serial = asyncio.Lock()
        self._engine = AsyncEmbeddedDB(self.engine_url)
        await self._engine.connect()
        await self._root_user()
        self._server = await serve(self._serve, '127.0.0.1', self.port, subprotocols=['cbor'], max_size=None)  # type: ignore[list-item]

    async def _root_user(self) -> None:
        from surrealdb.request_message.message import RequestMessage
        from surrealdb.request_message.methods import RequestMethod

        sql = f"DEFINE USER OVERWRITE {ROOT_USER} ON ROOT PASSWORD '{ROOT_PASSWORD}' ROLES OWNER;"
        await self._engine.execute(RequestMessage(RequestMethod.QUERY, query=sql, params={}).WS_CBOR_DESCRIPTOR)

    async def _stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            await self._drop_from(server)
            server.close()
            await server.wait_closed()
        engine, self._engine = self._engine, None
        if engine is not None:
            await engine.close()

    async def _drop(self) -> None:
        if self._server is not None:
            await self._drop_from(self._server)

    @staticmethod
    async def _drop_from(server: Server) -> None:
        for connection in list(server.connections):
            connection.transport.abort()
        await asyncio.sleep(0)

    async def _serve(self, connection: ServerConnection) -> None:
        with contextlib.suppress(ConnectionClosed):  # dropped on purpose, or the client went away
            async for frame in connection:
                if not isinstance(frame, bytes):
                    continue
                self.frames += 1
                if self.delay_seconds:
                    await asyncio.sleep(self.delay_seconds)
                engine, serial = self._engine, self._serial
                if engine is None or serial is None:
                    return
                if self.serial:
                    async with serial:
                        reply = await engine.execute(frame)
                else:
                    reply = await engine.execute(frame)
                await connection.send(reply)
