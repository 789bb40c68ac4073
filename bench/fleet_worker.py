"""The processes of ``bench/fleet.py``: the hosted database (a bridge process) and one Lambda instance (a worker).

``bridge``: tests/support/ws_bridge.py's WsBridge over a SurrealKV copy of the seeded tenants, in a process of its own
(its event loop shares no interpreter with the workers or the dispatcher), with ``serial`` off by default: WsBridge
otherwise runs one request of any connection at a time in the engine, which a hosted server does not (four client
processes on an engine-bound query: 12.6 s serial, 8.3 s concurrent on this machine, measured while writing this).
Each frame is delayed ``delay`` seconds before the engine runs it (a network round trip); frames and bytes each way and
the process's CPU are counted. It prints ``{"url": …}``, then answers ``stats``, ``delay <seconds>`` and ``quit`` lines
on stdin.

``worker``: a fresh interpreter that imports one function's handler exactly as Lambda's init does (the retrieval
function loads the embedding model at import), with the design's tuning knobs, then serves requests sent one JSON
line each on stdin by calling ``lambda_handler`` with API Gateway v2 events, answering one JSON line each on the
original stdout (the handlers' own output goes to stderr). Per request: handler wall and CPU ms, the database frames
it sent and received and their bytes (counted on the client's websocket), whether it was this process's first request
for the context, and the status. Frames sent are the round trips: the SDK sends one per ``Database.query`` (signin on a
new connection included).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent


def rss_mb(field: str = 'VmRSS') -> float:
    with open('/proc/self/status') as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ':')) / 1024


# ---------------------------------------------------------------- the hosted database ---


def in_session(frame: bytes, session: str, tail: bytes) -> bytes:
    """An RPC request (a CBOR map) with ``"session": session`` added: the map's header counts one more pair and the
    pair goes at the end (``tail``), the rest of the frame untouched; a map of 23 pairs or more is decoded instead."""
    import cbor2

    if 0xA0 <= frame[0] < 0xB7:
        return bytes([frame[0] + 1]) + frame[1:] + tail
    request = cbor2.loads(frame)
    request['session'] = session
    return cbor2.dumps(request)


def bridge(engine_url: str, delay_seconds: float, serial: bool) -> None:
    import asyncio
    import contextlib
    import uuid

    import cbor2

    sys.path[:0] = [str(BENCH.parent)]
    from websockets.asyncio.server import ServerConnection
    from websockets.exceptions import ConnectionClosed

    from tests.support.ws_bridge import WsBridge

    class CountingBridge(WsBridge):
        """WsBridge that counts the bytes of each request and reply, and gives each connection its own engine
        session (its ``_serve``, with both): the engine's default session is one for every connection, so concurrent
        requests of different connections would share its ``USE`` and sign-in (WsBridge serialises them instead)."""

        bytes_in = 0
        bytes_out = 0
        connections = 0

        async def _serve(self, connection: ServerConnection) -> None:
            self.connections += 1
            engine = self._engine
            session = str(uuid.uuid4())
            if engine is None:
                return
            await engine.execute(cbor2.dumps({'id': 0, 'method': 'attach', 'session': session}))
            tail = cbor2.dumps('session') + cbor2.dumps(session)
            try:
                with contextlib.suppress(ConnectionClosed):
                    async for frame in connection:
                        if not isinstance(frame, bytes):
                            continue
                        self.frames += 1
                        self.bytes_in += len(frame)
                        if self.delay_seconds:
                            await asyncio.sleep(self.delay_seconds)
                        engine, lock = self._engine, self._serial
                        if engine is None or lock is None:
                            return
                        request = in_session(frame, session, tail)
                        if self.serial:
                            async with lock:
                                reply = await engine.execute(request)
                        else:
                            reply = await engine.execute(request)
                        self.bytes_out += len(reply)
                        await connection.send(reply)
            finally:
                if self._engine is not None:
                    await self._engine.execute(cbor2.dumps({'id': 0, 'method': 'detach', 'session': session}))

    started = time.perf_counter()
    db = CountingBridge(engine_url, delay_seconds=delay_seconds, serial=serial)
    db.start()
    print(json.dumps({'url': db.url, 'open_s': time.perf_counter() - started}), flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == 'stats':
            stats = {
                'frames': db.frames,
                'bytes_in': db.bytes_in,
                'bytes_out': db.bytes_out,
                'connections': db.connections,
                'cpu_s': time.process_time(),  # the engine's threads and the bridge's loop
                'rss_mb': rss_mb(),
            }
            print(json.dumps(stats), flush=True)
        elif command.startswith('delay '):
            db.delay_seconds = float(command.split()[1])
            print(json.dumps({'delay': db.delay_seconds}), flush=True)
        elif command == 'quit':
            break
    db.stop()
    print(json.dumps({'closed': True}), flush=True)
    os._exit(0)  # the engine's runtime threads need no orderly teardown (one panicked on interpreter exit)


# ---------------------------------------------------------------- one Lambda instance ---


class Wire:
    """Frames and bytes on this process's database websocket (``websockets.sync`` client connections)."""

    sent = 0
    received = 0
    bytes_out = 0
    bytes_in = 0

    @classmethod
    def install(cls) -> None:
        from websockets.sync.client import ClientConnection

        send, recv = ClientConnection.send, ClientConnection.recv

        def counted_send(self: Any, message: Any, *args: Any, **kwargs: Any) -> Any:
            cls.sent += 1
            cls.bytes_out += len(message)
            return send(self, message, *args, **kwargs)

        def counted_recv(self: Any, *args: Any, **kwargs: Any) -> Any:
            data = recv(self, *args, **kwargs)
            cls.received += 1
            cls.bytes_in += len(data)
            return data

        ClientConnection.send = counted_send  # type: ignore[method-assign]
        ClientConnection.recv = counted_recv  # type: ignore[method-assign]

    @classmethod
    def snapshot(cls) -> tuple[int, int, int, int]:
        return cls.sent, cls.received, cls.bytes_out, cls.bytes_in


def worker(function: str, knobs: dict[str, Any]) -> None:
    started = time.perf_counter()
    proto = os.fdopen(os.dup(1), 'w', buffering=1)  # the protocol; the handlers' stdout (EMF lines) goes to stderr
    os.dup2(2, 1)
    sys.path.insert(0, str(BENCH))
    import dataclasses

    import bench_env  # noqa: F401  # paths and a quiet environment first

    from agent_memory import tuning

    tuning.TUNING = dataclasses.replace(tuning.TUNING, **knobs)
    Wire.install()
    handler = bench_env.load_handler(function)  # Lambda's init phase: imports, the model (retrieval), no database yet
    from local_runtime.events import LocalContext, http_event

    proto.write(json.dumps({'ready': True, 'init_s': time.perf_counter() - started, 'rss_mb': rss_mb()}) + '\n')
    seen: dict[str, int] = {}
    served = 0
    for line in sys.stdin:
        request = json.loads(line)
        if request.get('quit'):
            break
        ctx = request['ctx']
        seen[ctx] = seen.get(ctx, 0) + 1
        served += 1
        event = http_event(request['method'], f'/api/v1/{ctx}{request["path"]}', headers={'authorization': f'Bearer {request["key"]}'},
                           body=request['body'])  # fmt: skip
        before, cpu, began = Wire.snapshot(), time.process_time(), time.perf_counter()
        response = handler.lambda_handler(event, LocalContext())
        wall, cpu_ms = (time.perf_counter() - began) * 1000, (time.process_time() - cpu) * 1000
        after = Wire.snapshot()
        reply: dict[str, Any] = {
            'status': response['statusCode'], 'ms': wall, 'cpu_ms': cpu_ms, 'nth': seen[ctx], 'served': served,
            'sent': after[0] - before[0], 'received': after[1] - before[1], 'bytes_out': after[2] - before[2],
            'bytes_in': after[3] - before[3],
        }  # fmt: skip
        if response['statusCode'] >= 300:
            reply['error'] = str(response.get('body'))[:300]
        elif request.get('hits'):
            reply['hits'] = [hit['id'] for hit in json.loads(response['body'])['hits']]
        proto.write(json.dumps(reply) + '\n')
    proto.write(json.dumps({'bye': True, 'served': served, 'peak_rss_mb': rss_mb('VmHWM'), 'rss_mb': rss_mb()}) + '\n')
    proto.flush()
    os._exit(0)


if __name__ == '__main__':
    spec = json.loads(sys.argv[2])
    if sys.argv[1] == 'bridge':
        bridge(spec['engine'], spec['delay'], spec['serial'])
    else:
        worker(spec['function'], spec['knobs'])
