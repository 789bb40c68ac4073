"""Lifecycle sweep benchmark: set-based batched UPDATEs (LifecycleStore) versus a naive per-row Python loop.

Run from the repository root (``make bench``), or directly::

    PYTHONPATH=shared:infra .venv/bin/python bench/lifecycle.py --sizes 10000,100000

For every size N the script loads N ``attribute`` rows into a fresh database, times
``LifecycleStore.decay`` and ``LifecycleStore.expire`` (wall time and peak RSS), then loads a fresh
copy of the same rows and times the naive loop doing the same work: fetch every row, then one
``UPDATE $id ...`` per row. Above ``--naive-max`` rows the naive loop runs on a ``--naive-sample``-row
sample and its time is extrapolated linearly (labelled as such). Both results are checked against
each other and against the value computed in Python from the deterministic data.

The embedded engine (``mem://``) runs inside this process, so RSS figures include the database.
Progress goes to stderr; the report goes to stdout.

``--vectors`` gives every row an embedding, as production attributes have.
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import importlib.metadata
import math
import os
import pickle
import platform
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_env import ROOT  # noqa: I001  # first: paths and environment (a key secret, mem://) before the service imports
from surrealdb import RecordID  # noqa: E402

from agent_memory.composition import IMPORTANCE  # noqa: E402
from agent_memory.db.connection import Database  # noqa: E402
from agent_memory.db.lifecycle_store import LifecycleStore  # noqa: E402
from agent_memory.db.migrations import ensure_migrated  # noqa: E402
from agent_memory.db.sdk import Vector  # noqa: E402
from agent_memory.domain.importance import DAILY_DECAY, IMPORTANCE_MAX, IMPORTANCE_MIN, INITIAL_IMPORTANCE  # noqa: E402
from agent_memory.tuning import TUNING  # noqa: E402

DEFAULT_BATCH = TUNING.sweep_batch

DAY = 'bench-day-1'
CATEGORIES = ('context', 'knowledge', 'identity')  # row i has CATEGORIES[i % 3]
ENTITIES = 8
LOAD_BATCH = 5000  # rows per query call
LAMBDA_LIMIT_S = 900.0
COMFORT_FRACTION = 1 / 3  # "comfortable" = at least 3x headroom under the 15-minute limit
WORDS = (
    'prefers', 'coffee', 'tea', 'london', 'paris', 'berlin', 'project', 'apollo', 'meeting', 'tuesday',
    'blue', 'green', 'vegetarian', 'remote', 'office', 'deadline', 'budget', 'python', 'rust', 'hiking',
)  # fmt: skip


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---- memory measurement ----------------------------------------------------------------------------
def _status_kb(field_name: str) -> int | None:
    try:
        with open('/proc/self/status', encoding='ascii') as fh:
            match = re.search(rf'^{field_name}:\s+(\d+) kB', fh.read(), re.MULTILINE)
    except OSError:
        return None
    return int(match.group(1)) if match else None


def _reset_hwm() -> bool:
    """Reset the kernel's per-process RSS high-water mark (VmHWM) so it measures one phase only."""
    try:
        with open('/proc/self/clear_refs', 'w', encoding='ascii') as fh:
            fh.write('5')
    except OSError:
        return False
    return True


def _ru_maxrss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB on Linux


@dataclass
class Phase:
    """Wall time and peak RSS of one phase: background VmRSS sampling plus the kernel's VmHWM."""

    label: str
    seconds: float = 0.0
    start_kb: int = 0
    peak_kb: int = 0
    end_kb: int = 0
    ru_maxrss_kb: int = 0

    @property
    def delta_mb(self) -> float:
        return max(0, self.peak_kb - self.start_kb) / 1024


def _sample(phase: Phase, t0: float, stop: threading.Event) -> None:
    # The embedded engine holds the GIL while a statement runs, so samples land between statements;
    # VmHWM (read at the end) catches the peaks inside a statement.
    next_beat = t0 + 30
    while not stop.wait(0.01):
        rss = _status_kb('VmRSS')
        if rss is not None and rss > phase.peak_kb:
            phase.peak_kb = rss
        now = time.perf_counter()
        if now >= next_beat:
            log(f'    ... {phase.label}: {now - t0:.0f}s, RSS {(rss or 0) / 1024:.0f} MB')
            next_beat = now + 30


PROCESS_PEAK_KB = 0


def measure(label: str, fn: Callable[[], Any]) -> tuple[Any, Phase]:
    global PROCESS_PEAK_KB
    phase = Phase(label)
    # ru_maxrss follows VmHWM, which _reset_hwm lowers: keep the process-wide high-water ourselves.
    PROCESS_PEAK_KB = max(PROCESS_PEAK_KB, _ru_maxrss_kb())
    _reset_hwm()
    phase.start_kb = phase.peak_kb = _status_kb('VmRSS') or 0
    t0 = time.perf_counter()
    stop = threading.Event()
    sampler = threading.Thread(target=_sample, args=(phase, t0, stop), daemon=True)
    sampler.start()
    try:
        result = fn()
    finally:
        phase.seconds = time.perf_counter() - t0
        stop.set()
        sampler.join()
        phase.end_kb = _status_kb('VmRSS') or 0
        phase.peak_kb = max(phase.peak_kb, _status_kb('VmHWM') or 0, phase.end_kb)
        phase.ru_maxrss_kb = _ru_maxrss_kb()
        PROCESS_PEAK_KB = max(PROCESS_PEAK_KB, phase.ru_maxrss_kb, phase.peak_kb)
    log(f'    {label}: {phase.seconds:.2f}s, peak RSS delta {phase.delta_mb:.1f} MB')
    return result, phase


# ---- data --------------------------------------------------------------------------------------
def category(i: int) -> str:
    return CATEGORIES[i % 3]


def is_old(i: int) -> bool:
    """Half of the context rows were learned 10 days ago (expiry candidates); everything else 1 hour ago."""
    return i % 3 == 0 and (i // 3) % 2 == 0


def importance(i: int) -> float:
    return round(INITIAL_IMPORTANCE[category(i)] * (0.5 + (i % 101) / 100), 6)


def make_rows(start: int, stop: int, now: dt.datetime, vectors: bool = False) -> list[dict[str, Any]]:
    old, recent = now - dt.timedelta(days=10), now - dt.timedelta(hours=1)
    rows = []
    for i in range(start, stop):
        created = old if is_old(i) else recent
        rows.append({
            # Shaped like agent_memory.clock.new_id(): 12 hex digits of milliseconds, then 10 more.
            'id': RecordID('attribute', f'{int(created.timestamp() * 1000):012x}{i:010x}'),
            'entity': RecordID('entity', ['person', f'p{i % ENTITIES}']),
            'key': f'k{i % 50}',
            'value': f'{WORDS[i % 20]} {WORDS[(i // 20) % 20]} {WORDS[(i // 400) % 20]} {i}',
            'memory_category': category(i),
            'importance_base': importance(i),
            'confidence': 0.9,
            'source': {'kind': 'bench'},
            'valid_from': created,
            'created_at': created,
            'confirmed_at': created,
            'scope_sets': [['/']],
        } | ({'embedding': unit_vector(i)} if vectors else {}))  # fmt: skip
    return rows


@dataclass(frozen=True)
class Expected:
    """What both approaches must produce, computed in Python from the deterministic rows."""

    decayed_rows: int
    importance_sum: float
    expired_rows: int


def expected(n: int) -> Expected:
    values, decayed = [], 0
    for i in range(n):
        factor = DAILY_DECAY.get(category(i))
        if factor is None:
            values.append(importance(i))
        else:
            decayed += 1
            values.append(max(IMPORTANCE_MIN, min(IMPORTANCE_MAX, importance(i) * factor)))
    return Expected(decayed, math.fsum(values), sum(1 for i in range(n) if is_old(i)))


_RUN = 0


def unit_vector(seed: int, dimension: int = 384) -> Vector:
    """A deterministic random unit vector (the write cost does not depend on what the vector means)."""
    rng = random.Random(seed)
    values = [rng.gauss(0.0, 1.0) for _ in range(dimension)]
    norm = math.sqrt(sum(v * v for v in values))
    return Vector(v / norm for v in values)


def fresh_database(url: str, label: str) -> tuple[Database, str]:
    global _RUN
    _RUN += 1
    name = f'bench_{label}_{os.getpid()}_{_RUN}'
    db = Database(url, 'bench')
    ensure_migrated(db, name, 'context')
    return db, name


def load(db: Database, name: str, n: int, now: dt.datetime, stmt_rows: int, vectors: bool = False) -> float:
    """Bulk-load ``n`` attribute rows: one query per LOAD_BATCH rows, one INSERT statement per ``stmt_rows``."""
    t0 = time.perf_counter()
    people = [
        {'id': RecordID('entity', ['person', f'p{k}']), 'name': f'p{k}', 'type': 'person', 'memory_category': 'identity',
         'importance_base': 1.0, 'scope_sets': [['/']], 'created_at': now, 'updated_at': now}
        for k in range(ENTITIES)
    ]  # fmt: skip
    db.query(name, 'INSERT INTO entity $rows RETURN NONE;', {'rows': people})
    next_report = 100_000
    for start in range(0, n, LOAD_BATCH):
        rows = make_rows(start, min(n, start + LOAD_BATCH), now, vectors)
        chunks = [rows[k : k + stmt_rows] for k in range(0, len(rows), stmt_rows)]
        sql = '\n'.join(f'INSERT INTO attribute $r{j} RETURN NONE;' for j in range(len(chunks)))
        db.query(name, sql, {f'r{j}': chunk for j, chunk in enumerate(chunks)})
        loaded = start + len(rows)
        if loaded >= next_report:
            log(f'    loaded {loaded:,} / {n:,} rows ({time.perf_counter() - t0:.1f}s)')
            next_report += 100_000
    count = db.query(name, 'SELECT count() AS c FROM attribute GROUP ALL;')[0]
    if not count or count[0]['c'] != n:
        raise SystemExit(f'load failed: expected {n} rows, found {count}')
    return time.perf_counter() - t0


class Recorder:
    """Wraps a Database to time each statement LifecycleStore sends (one per batch)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.calls: list[tuple[float, int]] = []  # (seconds, rows affected)

    def query(self, database: str, sql: str, params: dict[str, Any] | None = None) -> list[Any]:
        t0 = time.perf_counter()
        result = self.db.query(database, sql, params)
        last = result[-1]  # the batch's row count, alone or first in a [count, last_id] pair
        self.calls.append((time.perf_counter() - t0, int((last[0] if isinstance(last, list) else last) or 0)))
        return result

    def take(self) -> list[tuple[float, int]]:
        calls, self.calls = self.calls, []
        return calls


def importance_sum(db: Database, name: str) -> float:
    return float(db.query(name, 'SELECT math::sum(importance) AS s FROM attribute GROUP ALL;')[0][0]['s'])


def expired_count(db: Database, name: str, now: dt.datetime) -> int:
    rows = db.query(name, 'SELECT count() AS c FROM attribute WHERE valid_until = $now GROUP ALL;', {'now': now})[0]
    return int(rows[0]['c']) if rows else 0


def close(db: Database, name: str, url: str) -> None:
    if not url.startswith(('mem://', 'memory')):
        db.query(name, f'REMOVE DATABASE IF EXISTS {name};')
    db.close()


# ---- the naive loop ---------------------------------------------------------------------------------
def naive_decay(db: Database, name: str) -> int:
    rows = db.query(name, 'SELECT id, importance, memory_category FROM attribute;')[0]
    log(f'    naive decay: fetched {len(rows):,} rows')
    updated = 0
    for row in rows:
        factor = DAILY_DECAY.get(row['memory_category'])
        if factor is None:
            continue
        value = max(IMPORTANCE_MIN, min(IMPORTANCE_MAX, row['importance'] * factor))
        db.query(name, 'UPDATE $id SET importance_base = $v RETURN NONE;', {'id': row['id'], 'v': value})
        updated += 1
        if updated % 100_000 == 0:
            log(f'    naive decay: {updated:,} rows updated')
    return updated


def naive_expire(db: Database, name: str, now: dt.datetime, cutoff: dt.datetime) -> int:
    rows = db.query(
        name,
        'SELECT id FROM attribute WHERE memory_category = "context" AND created_at < $cutoff AND valid_until IS NONE;',
        {'cutoff': cutoff},
    )[0]
    log(f'    naive expire: fetched {len(rows):,} candidates')
    for k, row in enumerate(rows, 1):
        db.query(name, 'UPDATE $id SET valid_until = $now RETURN NONE;', {'id': row['id'], 'now': now})
        if k % 100_000 == 0:
            log(f'    naive expire: {k:,} rows updated')
    return len(rows)


# ---- one size ------------------------------------------------------------------------------------
@dataclass
class Row:
    size: int
    operation: str
    set_phase: Phase
    naive_phase: Phase
    set_rows: int
    naive_rows: int
    naive_n: int  # rows the naive loop actually ran on (< size when extrapolated)
    statements: list[tuple[float, int]]  # set-based: (seconds, rows) per batched statement

    @property
    def extrapolated(self) -> bool:
        return self.naive_n < self.size

    @property
    def naive_seconds(self) -> float:
        return self.naive_phase.seconds * self.size / self.naive_n

    @property
    def naive_rows_scaled(self) -> int:
        return round(self.naive_rows * self.size / self.naive_n)


@dataclass
class SizeResult:
    size: int
    load: Phase
    naive_load: Phase
    rows: list[Row]
    checks: list[tuple[str, bool, str]]
    process_peak_kb: int = 0


def rel_close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(abs(a), abs(b), 1e-12)


def run_size(n: int, args: argparse.Namespace, now: dt.datetime) -> SizeResult:
    cutoff = now - dt.timedelta(days=7)
    log(f'== N = {n:,}')
    # Set-based: LifecycleStore exactly as the sweeps call it.
    db, name = fresh_database(args.url, f'set_{n}')
    _, load_phase = measure(f'load {n:,} rows (set-based copy)', lambda: load(db, name, n, now, args.stmt_rows, args.vectors))
    recorder = Recorder(db)
    store = LifecycleStore(recorder, name, IMPORTANCE)  # type: ignore[arg-type]  # duck-typed: only .query is used
    set_decayed, set_decay = measure(f'set-based decay N={n:,}', lambda: store.decay(DAY))
    decay_calls = recorder.take()
    set_sum = importance_sum(db, name)
    set_expired, set_expire = measure(f'set-based expire N={n:,}', lambda: store.expire(now, cutoff))
    expire_calls = recorder.take()
    set_expired_count = expired_count(db, name, now)
    close(db, name, args.url)

    # Naive: a fresh copy (a sample above --naive-max), one UPDATE per row.
    naive_n = n if n <= args.naive_max else min(n, args.naive_sample)
    db, name = fresh_database(args.url, f'naive_{naive_n}')
    label = f'load {naive_n:,} rows (naive copy{", sample" if naive_n < n else ""})'
    _, naive_load = measure(label, lambda: load(db, name, naive_n, now, args.stmt_rows, args.vectors))
    naive_decayed, naive_decay_phase = measure(f'naive decay N={naive_n:,}', lambda: naive_decay(db, name))
    naive_sum = importance_sum(db, name)
    naive_expired, naive_expire_phase = measure(f'naive expire N={naive_n:,}', lambda: naive_expire(db, name, now, cutoff))
    naive_expired_count = expired_count(db, name, now)
    close(db, name, args.url)

    want, want_naive = expected(n), expected(naive_n)
    checks = [
        ('set-based decay: rows affected == expected', set_decayed == want.decayed_rows, f'{set_decayed:,} vs {want.decayed_rows:,}'),
        ('set-based sum(importance) == expected (rel 1e-6)', rel_close(set_sum, want.importance_sum),
         f'{set_sum:.6f} vs {want.importance_sum:.6f}'),
        ('set-based expired rows == expected', set_expired == set_expired_count == want.expired_rows,
         f'{set_expired:,} returned, {set_expired_count:,} in db, {want.expired_rows:,} expected'),
        ('naive decay: rows affected == expected', naive_decayed == want_naive.decayed_rows,
         f'{naive_decayed:,} vs {want_naive.decayed_rows:,}'),
        ('naive sum(importance) == expected (rel 1e-6)', rel_close(naive_sum, want_naive.importance_sum),
         f'{naive_sum:.6f} vs {want_naive.importance_sum:.6f}'),
        ('naive expired rows == expected', naive_expired == naive_expired_count == want_naive.expired_rows,
         f'{naive_expired:,} returned, {naive_expired_count:,} in db, {want_naive.expired_rows:,} expected'),
    ]  # fmt: skip
    if naive_n == n:
        checks += [
            ('set-based vs naive: sum(importance) equal (rel 1e-6)', rel_close(set_sum, naive_sum),
             f'{set_sum:.6f} vs {naive_sum:.6f} (rel diff {abs(set_sum - naive_sum) / max(abs(naive_sum), 1e-12):.1e})'),
            ('set-based vs naive: expired row count equal', set_expired_count == naive_expired_count,
             f'{set_expired_count:,} vs {naive_expired_count:,}'),
        ]  # fmt: skip
    else:
        checks.append((
            f'set-based vs naive: compared through the expected values (naive ran on a {naive_n:,}-row sample)',
            all(ok for _, ok, _ in checks), 'both match the Python-computed result for their data',
        ))  # fmt: skip
    rows = [
        Row(n, 'decay', set_decay, naive_decay_phase, set_decayed, naive_decayed, naive_n, decay_calls),
        Row(n, 'expire', set_expire, naive_expire_phase, set_expired, naive_expired, naive_n, expire_calls),
    ]
    return SizeResult(n, load_phase, naive_load, rows, checks, max(PROCESS_PEAK_KB, _ru_maxrss_kb()))


def run_size_isolated(n: int, args: argparse.Namespace, now: dt.datetime) -> SizeResult | str:
    """Run one size in a worker process: closing a mem:// connection does not give its memory back."""
    with tempfile.TemporaryDirectory(prefix='bench-lifecycle-') as tmp:
        out = Path(tmp) / 'result.pickle'
        cmd = [
            sys.executable, str(Path(__file__).resolve()), '--child-size', str(n), '--child-out', str(out), '--now', now.isoformat(),
            '--url', args.url, '--naive-max', str(args.naive_max), '--naive-sample', str(args.naive_sample),
            '--stmt-rows', str(args.stmt_rows), *(['--vectors'] if args.vectors else []),
        ]  # fmt: skip
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL)
        if proc.returncode != 0 or not out.exists():
            killed = ' (killed: out of memory?)' if proc.returncode in (-9, 137) else ''
            return f'worker for N={n:,} exited with status {proc.returncode}{killed}'
        with out.open('rb') as fh:
            result: SizeResult = pickle.load(fh)
    return result


# ---- cold start and layer size --------------------------------------------------------------------------
_IMPORT_SNIPPET = """
import importlib.util, sys, time
t = time.perf_counter()
path = sys.argv[1]
sys.path.insert(0, path.rsplit('/', 1)[0])
spec = importlib.util.spec_from_file_location('app', path)
module = importlib.util.module_from_spec(spec)
sys.modules['app'] = module
spec.loader.exec_module(module)
print((time.perf_counter() - t) * 1000)
"""


def cold_starts(runs: int = 3) -> list[tuple[str, float | None, float | None, str]]:
    env = {
        **os.environ,
        'AGENT_MEMORY_DB_URL': 'mem://',
        'AGENT_MEMORY_KEY_SECRET': 'x',
        'PYTHONPATH': os.pathsep.join([str(ROOT / 'shared'), str(ROOT / 'infra')]),
        'POWERTOOLS_SERVICE_NAME': os.environ.get('POWERTOOLS_SERVICE_NAME', 'agent-memory-bench'),
    }
    out: list[tuple[str, float | None, float | None, str]] = []
    for path in sorted(glob.glob(str(ROOT / 'functions' / '*' / 'app.py'))):
        name = Path(path).parent.name
        imports, walls, error = [], [], ''
        for _ in range(runs):
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, '-c', _IMPORT_SNIPPET, path], env=env, cwd=ROOT, capture_output=True, text=True)
            walls.append((time.perf_counter() - t0) * 1000)
            if proc.returncode != 0:
                error = (proc.stderr.strip().splitlines() or ['failed'])[-1]
                break
            imports.append(float(proc.stdout.strip().splitlines()[-1]))
        if error:
            out.append((name, None, None, error))
        else:
            out.append((name, statistics.median(imports), statistics.median(walls), ''))
        log(f'  cold start {name}: {out[-1][1] or 0:.0f} ms {error}')
    return out


def layer_size() -> str:
    layer = ROOT / '.aws-sam' / 'build' / 'SharedLayer'
    if not layer.is_dir():
        return 'run sam build first (.aws-sam/build/SharedLayer not found)'
    size = int(subprocess.run(['du', '-sb', str(layer)], capture_output=True, text=True, check=True).stdout.split()[0])
    return f'{size:,} bytes ({size / 1024 / 1024:.1f} MiB) in {layer.relative_to(ROOT)} (unzipped layer limit: 250 MiB incl. function code)'


# ---- report ------------------------------------------------------------------------------------------
def table(header: list[str], rows: list[list[str]]) -> Iterator[str]:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    yield '| ' + ' | '.join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + ' |'
    yield '|' + '|'.join('-' * (w + 2) for w in widths) + '|'
    for row in rows:
        yield '| ' + ' | '.join(str(c).rjust(w) if k else str(c).ljust(w) for k, (c, w) in enumerate(zip(row, widths, strict=True))) + ' |'


def report(results: list[SizeResult], args: argparse.Namespace) -> None:
    print('\n## Set-based (LifecycleStore) vs naive per-row loop\n')
    header = ['size', 'operation', 'set-based s', 'naive s', 'naive/set', 'set ΔRSS MB', 'naive ΔRSS MB', 'rows (set)', 'rows (naive)']
    body = []
    for res in results:
        for r in res.rows:
            mark = '*' if r.extrapolated else ''
            body.append([
                f'{r.size:,}', r.operation, f'{r.set_phase.seconds:.2f}', f'{r.naive_seconds:.2f}{mark}',
                f'{r.naive_seconds / max(r.set_phase.seconds, 1e-9):.1f}x{mark}', f'{r.set_phase.delta_mb:.1f}',
                f'{r.naive_phase.delta_mb:.1f}{mark}', f'{r.set_rows:,}',
                f'{r.naive_rows_scaled:,}{mark}' if r.extrapolated else f'{r.naive_rows:,}',
            ])  # fmt: skip
    for line in table(header, body):
        print(line)
    if any(r.extrapolated for res in results for r in res.rows):
        print(
            f'\n* extrapolated: above --naive-max={args.naive_max:,} the naive loop ran on a {args.naive_sample:,}-row sample; '
            "its time and row count are scaled linearly by N/sample, its ΔRSS is the sample's measured value (not scaled; "
            'the fetch-all step grows with N).'
        )
    print('\nΔRSS = peak RSS during the phase minus RSS at its start (VmHWM reset per phase + 10 ms VmRSS sampling).')
    print('The embedded engine runs in-process, so RSS includes the database.')

    print(f'\n## Set-based batches (LifecycleStore batch = {DEFAULT_BATCH})\n')
    body = []
    for res in results:
        for r in res.rows:
            full = [t for t, affected in r.statements if affected >= DEFAULT_BATCH]
            body.append([
                f'{r.size:,}', r.operation, str(len(r.statements)), str(len(full)),
                f'{full[0] * 1000:.0f}' if full else '-', f'{full[-1] * 1000:.0f}' if full else '-',
                f'{max(t for t, _ in r.statements) * 1000:.0f}', f'{sum(t for t, _ in r.statements):.2f}',
            ])  # fmt: skip
    for line in table(['size', 'operation', 'statements', 'full batches', 'first full ms', 'last full ms', 'slowest ms', 'sum s'], body):
        print(line)
    print(
        'One statement per batch. If the first and last full batches cost about the same, the sweep is linear; '
        'if later batches cost more, each one re-scans rows that earlier batches already finished.'
    )

    print('\n## Load (not part of the comparison)\n')
    for res in results:
        naive_n = res.rows[0].naive_n
        lp, nl = res.load, res.naive_load
        print(f'- N={res.size:,}: {lp.seconds:.1f}s set-based copy ({res.size / max(lp.seconds, 1e-9):,.0f} rows/s, '
              f'RSS {(lp.end_kb - lp.start_kb) / 1024:+,.0f} MB to {lp.end_kb / 1024:,.0f} MB); '
              f'{nl.seconds:.1f}s naive copy ({naive_n:,} rows, RSS {(nl.end_kb - nl.start_kb) / 1024:+,.0f} MB)')  # fmt: skip
    print('Each size runs in its own worker process: closing an embedded mem:// connection does not give its memory back.')

    print('\n## Result checks\n')
    for res in results:
        for label, ok, detail in res.checks:
            print(f'- [{"PASS" if ok else "FAIL"}] N={res.size:,} {label}: {detail}')

    peaks = '; '.join(f'N={res.size:,}: {res.process_peak_kb / 1024:,.0f} MB' for res in results)
    print(f'\nProcess RSS high-water per worker (ru_maxrss / VmHWM, tracked across phases): {peaks}')


def _set_total(res: SizeResult) -> float:
    return sum(r.set_phase.seconds for r in res.rows)


def verdict(results: list[SizeResult]) -> None:
    print('\n## 1M rows within the Lambda 15-minute limit?\n')
    if not results:
        return
    ordered = sorted(results, key=lambda r: r.size)
    largest = ordered[-1]
    slope = None
    if len(ordered) >= 2 and _set_total(ordered[-2]) > 0:
        prev = ordered[-2]
        slope = math.log(_set_total(largest) / _set_total(prev)) / math.log(largest.size / prev.size)
    million = next((r for r in results if r.size == 1_000_000), None)
    if million:
        total = _set_total(million)
        basis = f'measured at N=1,000,000: decay {million.rows[0].set_phase.seconds:.1f}s + expire {million.rows[1].set_phase.seconds:.1f}s'
    else:
        exponent = max(1.0, slope or 1.0)
        total = _set_total(largest) * (1_000_000 / largest.size) ** exponent
        basis = f'EXTRAPOLATED from N={largest.size:,} as N^{exponent:.2f} (1M was not run)'
    share = total / LAMBDA_LIMIT_S
    if share <= COMFORT_FRACTION:
        word = f'YES, comfortably: {share:.0%} of the 900 s limit ({LAMBDA_LIMIT_S / total:.1f}x headroom)'
    elif share < 1:
        word = f'fits, but NOT comfortably: {share:.0%} of the 900 s limit (comfortable = under {COMFORT_FRACTION:.0%})'
    else:
        word = f'NO: {share:.0%} of the 900 s limit'
    print(f'1M set-based total (decay + expire): {total:.1f}s ({basis})')
    print(f'Verdict: {word}.' if million else f'Estimate only (1M not measured): {word}.')
    if slope is not None:
        prev = ordered[-2]
        limit_n = largest.size * (LAMBDA_LIMIT_S / _set_total(largest)) ** (1 / max(slope, 1e-9))
        print(
            f'Scaling: set-based time grows as N^{slope:.2f} between N={prev.size:,} and N={largest.size:,} (1.00 = linear); '
            f'at that slope one invocation reaches 900 s near N = {limit_n:,.0f} rows per context.'
        )
    if million:
        added = (million.load.end_kb - million.load.start_kb) / 1024
        print(
            f'Memory: loading 1M rows into the embedded engine added {added:,.0f} MB RSS; Lambda allows at most 10,240 MB, '
            'so a 1M-row context cannot be embedded in a Lambda: the sweep has to run against a SurrealDB server.'
        )
    print(
        'Caveats: measured on this machine with the embedded engine. A Lambda gets one vCPU at 1,769 MB. Against a remote '
        f'SurrealDB, every batch statement also pays a network round trip (about N/{DEFAULT_BATCH} statements per sweep).'
    )


def parse_sizes(text: str) -> list[int]:
    sizes = [int(s.replace('_', '').strip()) for s in text.split(',') if s.strip()]
    if not sizes or any(s <= 0 for s in sizes):
        raise argparse.ArgumentTypeError('sizes must be positive integers')
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--sizes', type=parse_sizes, default=[10_000, 100_000, 1_000_000], help='comma-separated row counts')
    parser.add_argument('--naive-max', type=int, default=100_000, help='above this, the naive loop runs on a sample and is extrapolated')
    parser.add_argument('--naive-sample', type=int, default=20_000, help='sample size for the extrapolated naive loop')
    parser.add_argument('--url', default='mem://', help='SurrealDB URL (default: embedded in-memory)')
    parser.add_argument(
        '--stmt-rows', type=int, default=50,
        help='rows per INSERT statement inside each 5000-row load query (one statement = one transaction)',
    )  # fmt: skip
    parser.add_argument('--skip-cold-start', action='store_true', help='skip the handler import timings')
    parser.add_argument('--vectors', action='store_true', help='every row carries an embedding (production rows do)')
    parser.add_argument('--in-process', action='store_true', help='run every size in this process instead of one worker per size')
    parser.add_argument('--child-size', type=int, help=argparse.SUPPRESS)
    parser.add_argument('--child-out', help=argparse.SUPPRESS)
    parser.add_argument('--now', type=dt.datetime.fromisoformat, help=argparse.SUPPRESS)
    args = parser.parse_args()

    now = args.now or dt.datetime.now(dt.UTC)
    if args.child_size:
        result = run_size(args.child_size, args, now)
        with open(args.child_out, 'wb') as fh:
            pickle.dump(result, fh)
        return
    print('# Lifecycle sweep benchmark\n')
    print(f'- date: {now:%Y-%m-%d %H:%M} UTC; url: {args.url}; sizes: {", ".join(f"{s:,}" for s in args.sizes)}')
    print(f'- python {platform.python_version()}, surrealdb SDK {importlib.metadata.version("surrealdb")}, '
          f'{platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}')  # fmt: skip
    print(f'- LifecycleStore batch: {DEFAULT_BATCH}; load: {LOAD_BATCH} rows per query, {args.stmt_rows} rows per INSERT statement')
    print('- data: 1/3 context, 1/3 knowledge, 1/3 identity; half of context created 10 days ago; decay day "bench-day-1"; '
          'expiry cutoff now - 7 days')  # fmt: skip
    print(f'- {"a" if args.vectors else "no"} 384-float embedding per row')
    sys.stdout.flush()

    results, failures = [], []
    for n in args.sizes:
        outcome = run_size(n, args, now) if args.in_process else run_size_isolated(n, args, now)
        if isinstance(outcome, str):
            log(f'  {outcome}')
            failures.append(outcome)
        else:
            results.append(outcome)
    report(results, args)
    for failure in failures:
        print(f'\nFAILED: {failure}')

    print('\n## Handler cold-start import (fresh interpreter, median of 3)\n')
    if args.skip_cold_start:
        print('skipped (--skip-cold-start)')
    else:
        log('measuring handler cold-start imports')
        rows = [
            [name, f'{imp:.0f}' if imp is not None else 'error', f'{wall:.0f}' if wall is not None else '-', err]
            for name, imp, wall, err in cold_starts()
        ]
        for line in table(['handler', 'import ms', 'process ms', 'note'], rows):
            print(line)
        print('\nimport ms: importing functions/<name>/app.py (powertools, pydantic, surrealdb, agent_memory) in a new interpreter;')
        print('process ms: the whole subprocess including interpreter start-up.')

    print(f'\nShared layer size: {layer_size()}')
    verdict(results)
    if failures:
        print(f'\n{len(failures)} SIZE(S) DID NOT COMPLETE')
    if not all(ok for res in results for _, ok, _ in res.checks):
        print('\nSOME RESULT CHECKS FAILED')
    if failures or not all(ok for res in results for _, ok, _ in res.checks):
        sys.exit(1)


if __name__ == '__main__':
    main()
