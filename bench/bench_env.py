"""Imported before anything else by the benchmark scripts: the repository on ``sys.path`` and a quiet service
environment on an in-memory SurrealDB (the scripts run in-process; nothing here talks to AWS).

``CACHE`` is where benches keep what they compute once (embeddings, LoCoMo ingests): ``bench/.cache`` (gitignored), or
``$AGENT_MEMORY_BENCH_CACHE`` when set (the smoke tests point it at a temporary folder, so a tiny run never touches a
real cache)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: the service is imported after the environment below
    from agent_memory.jobs import ExtractionJob

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [p for p in (str(ROOT / 'shared'), str(ROOT / 'infra'), str(ROOT)) if p not in sys.path]
os.environ.setdefault('AGENT_MEMORY_DB_URL', 'mem://')
os.environ.setdefault('AGENT_MEMORY_KEY_SECRET', 'bench-secret')
os.environ.setdefault('POWERTOOLS_LOG_LEVEL', 'ERROR')
os.environ.setdefault('POWERTOOLS_METRICS_DISABLED', 'true')
os.environ.pop('AGENT_MEMORY_QUEUE_URL', None)  # writes are stored, not queued: no extraction job runs mid-measurement
CACHE = Path(os.environ.get('AGENT_MEMORY_BENCH_CACHE') or ROOT / 'bench' / '.cache')


def load_handler(name: str) -> ModuleType:
    """``functions/<name>/app.py`` imported the way Lambda does it (each folder is its own code root)."""
    spec = importlib.util.spec_from_file_location(f'bench_{name}_app', ROOT / 'functions' / name / 'app.py')
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# On the full attribute schema a 200-row INSERT costs ~2x the CPU per row of a 25-row one and a 1,000-row INSERT ~12x
# (superlinear in the statement): retired insert_rates.py, bench/README.md. So 25-row statements, 10 per round trip.
STATEMENT_ROWS = 25
STATEMENTS_PER_QUERY = 10


def insert_sql(table: str, rows: list[dict[str, Any]], name: str = 'r') -> tuple[str, dict[str, Any]]:
    """One query of ``INSERT INTO table $<name>N`` statements of STATEMENT_ROWS bound rows each (the caller sends
    STATEMENT_ROWS × STATEMENTS_PER_QUERY rows per query; ``name`` keeps two tables' parameters apart in one query)."""
    chunks = [rows[k : k + STATEMENT_ROWS] for k in range(0, len(rows), STATEMENT_ROWS)]
    sql = '\n'.join(f'INSERT INTO {table} ${name}{j} RETURN NONE;' for j in range(len(chunks)))
    return sql, {f'{name}{j}': chunk for j, chunk in enumerate(chunks)}


class CollectingQueue:
    """Stands in for the extraction queue: holds the jobs the facts handler sends, so a bench delivers each to the
    worker when it chooses (and can time it alone)."""

    def __init__(self) -> None:
        self.jobs: list[ExtractionJob] = []

    def send(self, jobs: list[ExtractionJob]) -> None:
        self.jobs.extend(jobs)
