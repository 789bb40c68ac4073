"""Search where it runs (issue 31): many Lambda instances, many tenants, a hosted database a round trip away.

The production shape on one machine, three search designs side by side in one run:

* (a) ``database``: the database's HNSW and full-text indexes only (no in-process index: ``local_vectors_max_rows``
  and ``local_text_max_rows`` 0);
* (b) ``as shipped``: the in-process index with the shipped bounds (vectors up to 20,000 rows a table, texts up to
  100,000), read a chunk per query while it warms, polled for changes before every search;
* (c) ``up to B``: in-process only up to ``--bound`` rows (default 500: a table of one load chunk is whole after its
  first query), ``c:ROWS`` for other bounds side by side. The knobs bound a *table*, not a context, so this is emulated
  with them: both limits set to B, so a table over B rows (and in practice the context it belongs to, whose passage
  and fact tables grow together) is searched in the database only.

The hosted database is one real engine (a SurrealKV copy of the seeded tenants) behind tests/support/ws_bridge.py in a
process of its own (``bench/fleet_worker.py``: concurrent connections are not serialised, each has its own engine
session; each frame is delayed by the round trip, 0 / 1 / 5 ms; frames, bytes and CPU counted). One copy serves every
run of an invocation (``--fresh-copy``: one per run); the runs' writes (a tenth of 200 requests) stay in it, a drift of
a few rows per tenant. N worker processes stand in for the retrieval function's Lambda instances, and max(1, N/4) more
for the facts function's: each starts cold (a fresh interpreter imports the handler, loads the model, holds no index),
serves requests through the real ``lambda_handler`` with API Gateway v2 events, and retires after a random number of
requests (``--lifetime``), a fresh one taking its place, as Lambda recycles instances. The tenants
(``bench/fleet_seed.py``, seeded once and cached under ``bench/.cache/fleet/``) are synthetic contexts of 200-5,000
facts and as many passages, large ones, and LoCoMo dev conversations; traffic arrives open loop (Poisson, ``--rate``
per second) and picks a tenant by Zipf rank (``--zipf``: the largest tenant ranks first, the second largest third, the
LoCoMo ones 2, 4, 8, 16, 32, the rest shuffled); a tenth of the requests are writes (a turn ``infer: none`` or a
triple ``infer: triples`` through the facts handler, to synthetic tenants), the reads are ``/query`` (70 %) and
``/context`` (30 %). The same requests, in the same order and at the same times, and the same worker lifetimes, replay
for every design; the designs' order reverses every other cell.

Printed per cell (delay, N) and design: ``/query`` and ``/context`` p50 / p95 / p99 (handler time, as Lambda bills it)
over all requests, a context's first request in a process and the warm ones; by tenant size; recall@10 on the LoCoMo
questions asked; database round trips (frames the client sent; the bridge's own count beside it) and bytes per request;
CPU per request in the instance and in the database; peak RSS per retrieval process; cold start; queueing (time waiting
for a free instance, not in the latencies) and how busy the instances were; then the issue's targets. Timings come
with the load average and a warning above 1.5, and a warning when the fleet could not keep up with ``--rate``.

    PYTHONPATH=shared:infra:. .venv/bin/python bench/fleet.py --small            # a smoke run, ~5 minutes
    make bench-fleet                                              # the default scale (~20 min on 2 quiet cores)
    PYTHONPATH=shared:infra:. .venv/bin/python bench/fleet.py --scale full --cells 1:8 --json out.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import queue
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_env import ROOT  # noqa: E402,I001  # first: paths and environment before the service imports
from fleet_seed import SCALES, Scale, passage, question, seeded  # noqa: E402
from retrieval import KEYS, facts  # noqa: E402

from tests.support.ws_bridge import ROOT_PASSWORD, ROOT_USER  # noqa: E402

WORKER = Path(__file__).resolve().parent / 'fleet_worker.py'
LOAD_WARNING = 1.5
SATURATED_MS = 1000  # queueing p95 above this: the fleet could not keep up with --rate
LOCOMO_RANKS = (2, 4, 8, 16, 32)
SMALL_ROWS = 5000  # the "contexts up to 5,000 rows"
BOUND = 500  # design (c): a table of at most one load chunk (local_vectors_load_rows) is whole after its first query
NAN = float('nan')


def design(name: str, bound: int) -> tuple[str, dict[str, Any]]:
    """A design's label and tuning knobs: ``a``, ``b``, ``c`` (bound ``bound``) or ``c:ROWS``."""
    if name == 'a':
        return 'database indexes only', {'local_vectors_max_rows': 0, 'local_text_max_rows': 0}
    if name == 'b':
        return 'in-process as shipped', {}
    rows = int(name.split(':')[1]) if name.startswith('c:') else bound
    assert name == 'c' or name.startswith('c:'), name
    return f'in-process up to {rows:,} rows', {'local_vectors_max_rows': rows, 'local_text_max_rows': rows}


# ---------------------------------------------------------------- the traffic ---


@dataclass(frozen=True)
class Request:
    at: float  # seconds after the start
    role: str  # 'reader' (the retrieval function) or 'writer' (the facts function)
    route: str  # '/query', '/context', 'turn', 'triple'
    tenant: dict[str, Any]
    body: dict[str, Any]
    question: int | None = None  # a LoCoMo question's index (scored)

    def message(self) -> dict[str, Any]:
        path = self.route if self.role == 'reader' else '/facts'
        return {'method': 'POST', 'path': path, 'ctx': self.tenant['id'], 'key': self.tenant['key'], 'body': self.body,
                'hits': self.question is not None}  # fmt: skip


def ranked(tenants: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """Tenants in Zipf rank order (module docstring)."""
    synthetic = sorted((t for t in tenants if t['kind'] == 'synthetic'), key=lambda t: -t['size'])
    locomo = [t for t in tenants if t['kind'] == 'locomo']
    fixed: dict[int, dict[str, Any]] = {}
    if synthetic:
        fixed[1] = synthetic.pop(0)
    if synthetic and synthetic[0]['size'] > SMALL_ROWS:
        fixed[3] = synthetic.pop(0)
    for rank, tenant in zip(LOCOMO_RANKS, locomo, strict=False):
        fixed[rank] = tenant
    rest = synthetic + locomo[len(LOCOMO_RANKS) :]
    rng.shuffle(rest)
    order: list[dict[str, Any]] = []
    for rank in range(1, len(tenants) + 1):
        order.append(fixed.pop(rank) if rank in fixed else rest.pop(0) if rest else fixed.pop(min(fixed)))
    return order


def traffic(tenants: list[dict[str, Any]], count: int, rate: float, write_share: float, zipf: float, seed: int) -> list[Request]:
    rng = random.Random(seed)
    order = ranked(tenants, rng)
    weights = [1 / rank**zipf for rank in range(1, len(order) + 1)]
    writable = [(t, w) for t, w in zip(order, weights, strict=True) if t['kind'] == 'synthetic']
    rows: dict[int, list[tuple[str, str, str]]] = {}
    requests, at = [], 0.0
    for _ in range(count):
        at += rng.expovariate(rate)
        if rng.random() < write_share:
            tenant = rng.choices([t for t, _ in writable], [w for _, w in writable])[0]
            name, key, _ = rows.setdefault(tenant['size'], facts(tenant['size']))[rng.randrange(tenant['size'])]
            value = rng.choice(KEYS[key])
            if rng.random() < 0.5:
                body: dict[str, Any] = {'text': passage(name, key, value), 'infer': 'none', 'sessionId': 'fleet'}
                requests.append(Request(at, 'writer', 'turn', tenant, body))
            else:
                triple = {'entity': {'type': 'person', 'name': name}, 'key': key, 'value': value}
                requests.append(Request(at, 'writer', 'triple', tenant, {'infer': 'triples', 'sessionId': 'fleet', 'triples': [triple]}))
            continue
        tenant = rng.choices(order, weights)[0]
        route = '/query' if rng.random() < 0.7 else '/context'
        if tenant['kind'] == 'locomo':
            asked = [i for i, q in enumerate(tenant['questions']) if q['category'] in (1, 2, 3, 4)]
            index: int | None = rng.choice(asked)
            text = tenant['questions'][index]['text']
        else:
            index, text = None, question(rows.setdefault(tenant['size'], facts(tenant['size'])), rng.randrange(tenant['size']))
        body = {'query': text, 'k': 10} | ({'mode': 'hybrid'} if route == '/query' else {})
        requests.append(Request(at, 'reader', route, tenant, body, index if route == '/query' else None))
    return requests


# ---------------------------------------------------------------- the processes ---


def spawn(kind: str, spec: dict[str, Any], env: dict[str, str], log: IO[str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(WORKER), kind, json.dumps(spec)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=log, text=True, bufsize=1, env=env)  # fmt: skip


def ask(process: subprocess.Popen[str], message: dict[str, Any] | str) -> dict[str, Any]:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write((message if isinstance(message, str) else json.dumps(message)) + '\n')
    process.stdin.flush()
    line = process.stdout.readline()
    if not line:
        raise RuntimeError(f'process {process.pid} ended (exit {process.wait()}); see its log')
    answer: dict[str, Any] = json.loads(line)
    return answer


def first_line(process: subprocess.Popen[str]) -> dict[str, Any]:
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        raise RuntimeError(f'process {process.pid} ended (exit {process.wait()}) before it was ready; see its log')
    answer: dict[str, Any] = json.loads(line)
    return answer


@dataclass
class Run:
    """One design in one cell: what every request, instance and the database reported."""

    design: str
    delay_ms: float
    fleet: int
    replies: list[dict[str, Any]] = field(default_factory=list)
    instances: list[dict[str, Any]] = field(default_factory=list)
    bridge: dict[str, Any] = field(default_factory=dict)
    load: list[float] = field(default_factory=list)
    seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


class Slot(threading.Thread):
    """One instance slot of a function: a worker process, replaced by a cold one after its lifetime."""

    def __init__(self, run: Run, role: str, lifetimes: list[int], work: queue.Queue[Request | None], started: threading.Barrier,
                 clock: list[float], spec: dict[str, Any], env: dict[str, str], log: IO[str]) -> None:  # fmt: skip
        super().__init__(daemon=True)
        self.run_, self.role, self.lifetimes, self.work, self.started = run, role, lifetimes, work, started
        self.clock, self.spec, self.env, self.log = clock, spec, env, log
        self.failure: BaseException | None = None

    def start_instance(self) -> tuple[subprocess.Popen[str], dict[str, Any]]:
        began = time.perf_counter()
        process = spawn('worker', self.spec, self.env, self.log)
        ready = first_line(process)
        return process, {'role': self.role, 'cold_start_s': time.perf_counter() - began, 'init_s': ready['init_s'],
                         'rss_after_init_mb': ready['rss_mb']}  # fmt: skip

    def run(self) -> None:
        try:
            self._serve()
        except BaseException as exc:  # reported by the dispatcher
            self.failure = exc
            self.started.abort()

    def _serve(self) -> None:
        first, lifetimes = True, iter(self.lifetimes)
        while True:
            process, instance = self.start_instance()
            if first:
                self.started.wait()  # the clock starts once every first instance is ready
                first = False
            quota, done = next(lifetimes), False
            while quota > 0:
                request = self.work.get()
                if request is None:
                    done = True
                    break
                waited = time.perf_counter() - (self.clock[0] + request.at)
                reply = ask(process, request.message())
                reply.update(route=request.route, role=self.role, kind=request.tenant['kind'], size=request.tenant['size'],
                             ctx=request.tenant['id'], waited_ms=max(0.0, waited * 1000), question=request.question)  # fmt: skip
                with self.run_.lock:
                    self.run_.replies.append(reply)
                quota -= 1
            instance.update(ask(process, {'quit': True}))
            process.wait()
            with self.run_.lock:
                self.run_.instances.append(instance)
            if done:
                return


class Database:
    """The hosted database: a bridge process over a working copy of the seeded tenants."""

    def __init__(self, source: Path, serial: bool, log: IO[str]) -> None:
        self.source, self.serial, self.log = source, serial, log
        self.work_dir: Path | None = None
        self.process: subprocess.Popen[str] | None = None
        self.url, self.open_s = '', 0.0

    def open(self) -> None:
        self.close()
        self.work_dir = Path(tempfile.mkdtemp(prefix='fleet-db-'))
        shutil.copytree(self.source / 'db', self.work_dir / 'db')
        self.process = spawn('bridge', {'engine': f'surrealkv://{self.work_dir / "db"}', 'delay': 0.0, 'serial': self.serial},
                             dict(os.environ), self.log)  # fmt: skip
        opened = first_line(self.process)
        self.url, self.open_s = opened['url'], opened['open_s']

    def ask(self, command: str) -> dict[str, Any]:
        assert self.process is not None
        return ask(self.process, command)

    def close(self) -> None:
        if self.process is not None:
            self.ask('quit')
            self.process.wait(30)
            self.process = None
        if self.work_dir is not None:
            shutil.rmtree(self.work_dir, ignore_errors=True)
            self.work_dir = None


def run_design(design: str, knobs: dict[str, Any], delay_ms: float, fleet: int, requests: list[Request], lifetimes: list[list[int]],
               db: Database, log: IO[str]) -> Run:  # fmt: skip
    """Replay ``requests`` on a fleet of ``fleet`` retrieval instances (and max(1, fleet / 4) facts ones) with the
    design's knobs, the database ``delay_ms`` a round trip away."""
    run = Run(design, delay_ms, fleet)
    db.ask(f'delay {delay_ms / 1000}')
    env = dict(os.environ) | {
        'AGENT_MEMORY_DB_URL': db.url,
        'AGENT_MEMORY_DB_USER': ROOT_USER,
        'AGENT_MEMORY_DB_PASSWORD': ROOT_PASSWORD,
        'PYTHONPATH': f'{ROOT / "shared"}:{ROOT / "infra"}:{ROOT}',
    }
    writers = max(1, fleet // 4)
    queues: dict[str, queue.Queue[Request | None]] = {'reader': queue.Queue(), 'writer': queue.Queue()}
    started = threading.Barrier(fleet + writers + 1)
    clock = [0.0]
    slots = [
        Slot(run, role, lifetimes[n], queues[role], started, clock, {'function': function, 'knobs': knobs}, env, log)
        for n, (role, function) in enumerate([('reader', 'retrieval')] * fleet + [('writer', 'facts')] * writers)
    ]
    for slot in slots:
        slot.start()
    started.wait(timeout=600)
    before = db.ask('stats')
    run.load.append(os.getloadavg()[0])
    clock[0] = began = time.perf_counter()
    for request in requests:
        pause = clock[0] + request.at - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
        queues[request.role].put(request)
    for role, count in (('reader', fleet), ('writer', writers)):
        for _ in range(count):
            queues[role].put(None)
    for slot in slots:
        slot.join()
        if slot.failure is not None:
            raise RuntimeError(f'a {slot.role} slot failed: {slot.failure!r}') from slot.failure
    run.seconds = time.perf_counter() - began
    run.load.append(os.getloadavg()[0])
    after = db.ask('stats')
    # the database's share while traffic ran (the replacement instances' init phases included)
    run.bridge = {k: after[k] - before[k] for k in ('frames', 'bytes_in', 'bytes_out', 'connections', 'cpu_s')} | {
        'rss_mb': after['rss_mb']
    }
    return run


# ---------------------------------------------------------------- the figures ---


def pct(values: Iterable[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float('nan')
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]  # nearest rank


def recall10(run: Run, tenants: dict[str, dict[str, Any]]) -> tuple[float, int]:
    """Evidence recall@10 of the LoCoMo /query replies (bench/locomo.py's measure): the share of a question's evidence
    turns among the turns of its top 10 hits (a passage through its turn, a fact through its source turn)."""
    found = []
    for reply in run.replies:
        if reply.get('question') is None or 'hits' not in reply:
            continue
        tenant = tenants[reply['ctx']]
        evidence = set(tenant['questions'][reply['question']]['evidence'])
        turns = {tenant['by_ref'][hit] for hit in reply['hits'][:10] if hit in tenant['by_ref']}
        found.append(len(evidence & turns) / len(evidence) if evidence else 0.0)
    return (statistics.mean(found) if found else float('nan')), len(found)


READS = ('/query', '/context')
EVERY = (0, 10**9)


def latency(replies: list[dict[str, Any]], routes: Iterable[str], nth: tuple[int, int] = EVERY,
            size: tuple[int, int] = EVERY) -> dict[str, float]:  # fmt: skip
    """p50 / p95 / p99 handler ms of the replies on ``routes`` whose ``nth`` (the process's how-manieth request for the
    context) and tenant size fall in the ranges."""
    chosen = [r['ms'] for r in replies if r['route'] in routes and nth[0] <= r['nth'] <= nth[1] and size[0] <= r['size'] <= size[1]]
    return {'n': len(chosen), 'p50': pct(chosen, 50), 'p95': pct(chosen, 95), 'p99': pct(chosen, 99)}


def middle(values: list[float]) -> dict[str, float]:
    return {'median': statistics.median(values), 'mean': statistics.mean(values)} if values else {'median': NAN, 'mean': NAN}


def summary(run: Run, tenants: dict[str, dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in run.replies if r['status'] < 300]
    out: dict[str, Any] = {'design': run.design, 'delay_ms': run.delay_ms, 'fleet': run.fleet, 'seconds': run.seconds, 'load': run.load}
    for route in (*READS, 'turn', 'triple'):
        on = [r for r in ok if r['route'] == route]
        out[route] = {
            'all': latency(ok, [route]),
            'first': latency(ok, [route], nth=(1, 1)),
            'warm': latency(ok, [route], nth=(2, EVERY[1])),
            'round_trips': middle([r['sent'] for r in on]),
            'cpu_ms': middle([r['cpu_ms'] for r in on]),
            'kb': middle([(r['bytes_in'] + r['bytes_out']) / 1024 for r in on]),
        }
    out['bands'] = {
        'up to 5k rows, warm': latency(ok, READS, nth=(2, EVERY[1]), size=(0, SMALL_ROWS)),
        'up to 5k rows, first': latency(ok, READS, nth=(1, 1), size=(0, SMALL_ROWS)),
        '4k-5k rows, first': latency(ok, READS, nth=(1, 1), size=(4000, SMALL_ROWS)),
    }
    for size in sorted({r['size'] for r in ok if r['size'] > SMALL_ROWS}):
        out['bands'][f'{size // 1000}k rows, first 20 in a process'] = latency(ok, READS, nth=(1, 20), size=(size, size))
        out['bands'][f'{size // 1000}k rows, warm (after 20)'] = latency(ok, READS, nth=(21, EVERY[1]), size=(size, size))
    out['recall10'], out['recall_n'] = recall10(run, tenants)
    readers = [i for i in run.instances if i['role'] == 'reader']
    out['instances'] = len(readers)
    out['peak_rss_mb'] = {'p50': pct([i['peak_rss_mb'] for i in readers], 50), 'max': max((i['peak_rss_mb'] for i in readers), default=NAN)}
    out['cold_start_s'] = pct([i['cold_start_s'] for i in readers], 50)
    out['waited_p95_ms'] = pct([r['waited_ms'] for r in run.replies], 95)
    out['errors'] = [r.get('error', '') for r in run.replies if r['status'] >= 300][:5]
    out['error_count'] = sum(r['status'] >= 300 for r in run.replies)
    out['bridge'] = run.bridge | {'frames_counted_by_clients': sum(r['sent'] for r in run.replies)}
    out['db_cpu_ms_per_request'] = 1000 * run.bridge.get('cpu_s', NAN) / max(1, len(run.replies))
    # the share of the run the retrieval instances spent in handlers (1: every instance busy all the time)
    out['busy'] = sum(r['ms'] for r in run.replies if r['role'] == 'reader') / 1000 / max(1e-9, run.seconds * run.fleet)
    return out


def number(value: float, digits: int = 0) -> str:
    return '—' if value != value else f'{value:,.{digits}f}'  # NaN: nothing measured


def lat(x: dict[str, float]) -> str:
    return '—' if not x['n'] else f'{number(x["p50"])} / {number(x["p95"])} / {number(x["p99"])} ({x["n"]})'


def table(cell: list[dict[str, Any]], names: dict[str, str]) -> str:
    """One cell's designs side by side (markdown)."""
    lines = ['| | ' + ' | '.join(f'({s["design"]}) {names[s["design"]]}' for s in cell) + ' |', '|---|' + '---|' * len(cell)]

    def row(label: str, values: Iterable[str]) -> None:
        lines.append(f'| {label} | ' + ' | '.join(values) + ' |')

    for route in READS:
        for part, label in (('all', 'all'), ('first', "a context's first in a process"), ('warm', 'warm')):
            row(f'{route} ms p50 / p95 / p99 (n), {label}', [lat(s[route][part]) for s in cell])
    for band in cell[0]['bands']:
        row(f'reads ms, {band}', [lat(s['bands'][band]) for s in cell])
    for route in ('turn', 'triple'):
        row(f'write ({route}) ms p50 / p95 / p99 (n)', [lat(s[route]['all']) for s in cell])
    row('LoCoMo recall@10 (questions)', [f'{number(s["recall10"], 3)} ({s["recall_n"]})' for s in cell])
    for route in READS:
        row(
            f'{route} round trips, median (mean)',
            [f'{number(s[route]["round_trips"]["median"])} ({number(s[route]["round_trips"]["mean"], 1)})' for s in cell],
        )
        row(
            f'{route} KB on the wire, median (mean)',
            [f'{number(s[route]["kb"]["median"], 1)} ({number(s[route]["kb"]["mean"], 1)})' for s in cell],
        )
    for route in READS:
        row(
            f'{route} CPU ms in the instance, median (mean)',
            [f'{number(s[route]["cpu_ms"]["median"])} ({number(s[route]["cpu_ms"]["mean"])})' for s in cell],
        )
    row('database CPU ms per request (engine + bridge)', [number(s['db_cpu_ms_per_request']) for s in cell])
    row(
        'write round trips, turn / triple (median)',
        [f'{number(s["turn"]["round_trips"]["median"])} / {number(s["triple"]["round_trips"]["median"])}' for s in cell],
    )
    row(
        'peak RSS per retrieval process MB, p50 / max',
        [f'{number(s["peak_rss_mb"]["p50"])} / {number(s["peak_rss_mb"]["max"])}' for s in cell],
    )
    row('retrieval processes started; cold start s (p50)', [f'{s["instances"]}; {number(s["cold_start_s"], 1)}' for s in cell])
    row('queueing for a free instance, p95 ms; instances busy', [f'{number(s["waited_p95_ms"])}; {s["busy"]:.0%}' for s in cell])
    row('errors', [str(s['error_count']) for s in cell])
    row(
        'frames the bridge received / the clients sent',
        [f'{s["bridge"].get("frames", 0):,} / {s["bridge"]["frames_counted_by_clients"]:,}' for s in cell],
    )
    row('load average at start / end', [' / '.join(f'{x:.1f}' for x in s['load']) for s in cell])
    return '\n'.join(lines)


def targets(cell: list[dict[str, Any]]) -> str:
    """The issue's targets (stated for 1 ms a round trip and N = 8) against each design of this cell."""
    checks: list[tuple[str, float, Any]] = [
        ('/query p95 ms, first queries included', 100, lambda s: s['/query']['all']['p95']),
        ('reads warm p95 ms, contexts up to 5k rows', 50, lambda s: s['bands']['up to 5k rows, warm']['p95']),
        ('reads p95 ms, first query of a 4k-5k-row context', 150, lambda s: s['bands']['4k-5k rows, first']['p95']),
        *[
            (f'reads p95 ms, {band}', 100 if 'warm' in band else 300, lambda s, band=band: s['bands'][band]['p95'])
            for band in cell[0]['bands']
            if band.startswith('100k')
        ],
        ('peak RSS MB per retrieval process (max)', 400, lambda s: s['peak_rss_mb']['max']),
        ('/query round trips (median)', 3, lambda s: s['/query']['round_trips']['median']),
        ('/context round trips (median)', 3, lambda s: s['/context']['round_trips']['median']),
        ('triple write round trips (median)', 2, lambda s: s['triple']['round_trips']['median']),
    ]
    lines = ['| target | ≤ | ' + ' | '.join(f'({s["design"]})' for s in cell) + ' |', '|---|---|' + '---|' * len(cell)]
    for label, limit, value in checks:
        marks = [f'{number(value(s))} {"✓" if value(s) <= limit else "✗"}' if value(s) == value(s) else '—' for s in cell]
        lines.append(f'| {label} | {limit} | ' + ' | '.join(marks) + ' |')
    return '\n'.join(lines)


# ---------------------------------------------------------------- main ---


def cells(text: str) -> list[tuple[float, int]]:
    return [(float(d), int(n)) for d, n in (c.split(':') for c in text.split(','))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--scale', choices=list(SCALES), default='default')
    parser.add_argument('--small', action='store_true', help='smoke run: small scale, cells 1:8 and 1:1, 120 requests a run')
    parser.add_argument('--cells', default='1:8,0:8,5:8,1:1,1:4', help='delay ms per frame : retrieval instances, comma-separated')
    parser.add_argument('--designs', default='a,b,c', help='a, b, c (c with --bound) or c:ROWS, comma-separated')
    parser.add_argument('--bound', type=int, default=BOUND, help="design (c)'s row bound")
    parser.add_argument('--requests', type=int, default=200, help='requests per run (design x cell)')
    parser.add_argument('--rate', type=float, default=3.0, help='requests per second (open loop, Poisson)')
    parser.add_argument('--lifetime', default='50,400', help='requests an instance serves before it retires: uniform in [lo, hi]')
    parser.add_argument('--write-share', type=float, default=0.1)
    parser.add_argument('--zipf', type=float, default=1.0)
    parser.add_argument('--serial', action='store_true', help="run the bridge's engine one request at a time (WsBridge's default)")
    parser.add_argument('--fresh-copy', action='store_true', help='a new copy of the seeded database (and bridge) for every run')
    parser.add_argument('--seed', type=int, default=31)
    parser.add_argument('--json', type=Path, help='write every summary here')
    args = parser.parse_args()
    if args.small:
        args.scale = 'small'
        if args.requests == parser.get_default('requests'):
            args.requests = 120
        if args.cells == parser.get_default('cells'):
            args.cells = '1:8,1:1'
    scale: Scale = SCALES[args.scale]
    source, manifest = seeded(scale)
    tenants = {t['id']: t for t in manifest['tenants']}
    chosen = args.designs.split(',')
    names = {name: design(name, args.bound) for name in chosen}
    lo, hi = (int(x) for x in args.lifetime.split(','))
    logs = Path(tempfile.mkdtemp(prefix='fleet-logs-'))
    largest = ', '.join(f'{t["size"]:,}' for t in sorted(tenants.values(), key=lambda t: -t['size'])[:3])
    print(f'{args.scale} scale: {len(tenants)} tenants (largest {largest}), {args.requests} requests a run at {args.rate:g}/s, '
          f'lifetimes {lo}-{hi} requests, bridge {"serial" if args.serial else "concurrent"}; logs in {logs}', file=sys.stderr)  # fmt: skip
    results: list[dict[str, Any]] = []
    with (logs / 'bridge.log').open('w') as bridge_log, (logs / 'workers.log').open('w') as log:
        db = Database(source, args.serial, bridge_log)
        try:
            db.open()
            for index, (delay, fleet) in enumerate(cells(args.cells)):
                results.extend(run_cell(args, index, delay, fleet, tenants, chosen, names, (lo, hi), db, log))
        finally:
            db.close()
    if args.json:
        args.json.write_text(
            json.dumps({'args': {k: str(v) for k, v in vars(args).items()}, 'tenants': len(tenants), 'results': results}, indent=1)
        )
    shutil.rmtree(logs, ignore_errors=True)


Tenants = dict[str, dict[str, Any]]


def run_cell(
    args: argparse.Namespace,
    index: int,
    delay: float,
    fleet: int,
    tenants: Tenants,
    chosen: list[str],
    names: dict[str, tuple[str, dict[str, Any]]],
    bounds: tuple[int, int],
    db: Database,
    log: IO[str],
) -> list[dict[str, Any]]:
    """Every design on one cell's traffic (the order reversed every other cell), printed side by side."""
    requests = traffic(list(tenants.values()), args.requests, args.rate, args.write_share, args.zipf, args.seed + index)
    rng = random.Random(args.seed * 7 + index)
    lifetimes = [[rng.randint(*bounds) for _ in range(args.requests)] for _ in range(fleet + max(1, fleet // 4))]
    order = chosen if index % 2 == 0 else chosen[::-1]
    cell: list[dict[str, Any]] = []
    for name in order:
        if args.fresh_copy:
            db.open()
        load = os.getloadavg()[0]
        warning = f'  WARNING: load above {LOAD_WARNING}, timings are contended' if load > LOAD_WARNING else ''
        print(f'  {delay:g} ms, N = {fleet}, design ({name}) {names[name][0]}: load {load:.1f}{warning}', file=sys.stderr)
        run = run_design(name, names[name][1], delay, fleet, requests, lifetimes, db, log)
        cell.append(summary(run, tenants))
        query = cell[-1]['/query']['all']
        print(f'    {run.seconds:.0f} s, /query p50 {query["p50"]:.0f} ms p95 {query["p95"]:.0f} ms, '
              f'queueing p95 {cell[-1]["waited_p95_ms"]:.0f} ms, errors {cell[-1]["error_count"]}', file=sys.stderr)  # fmt: skip
    cell.sort(key=lambda s: chosen.index(s['design']))
    loads = [x for s in cell for x in s['load']]
    contended = f' (above {LOAD_WARNING}: contended)' if max(loads) > LOAD_WARNING else ''
    print(f'\n### {delay:g} ms per round trip, N = {fleet} retrieval instances (+ {max(1, fleet // 4)} facts), {args.scale} scale, '
          f'{args.requests} requests at {args.rate:g}/s; load average {min(loads):.1f}-{max(loads):.1f}{contended}\n')  # fmt: skip
    print(table(cell, {k: v[0] for k, v in names.items()}))
    saturated = [s['design'] for s in cell if s['waited_p95_ms'] > SATURATED_MS]
    if saturated:
        print(f'\nWARNING: requests waited over {SATURATED_MS / 1000:g} s for a free instance in {", ".join(saturated)}: the '
              'machine could not keep up, and the latencies include that contention (lower --rate).')  # fmt: skip
    print(f"\nThe issue's targets (set for 1 ms and N = 8; this cell: {delay:g} ms, N = {fleet}):\n")
    print(targets(cell), flush=True)
    return cell


if __name__ == '__main__':
    main()
