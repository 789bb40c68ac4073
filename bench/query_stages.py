"""Where a hybrid ``POST /query`` spends its time, stage by stage, on a cached LoCoMo ingest.

Every public method of ``RetrievalStore`` (the candidate lists, the document-frequency probe, seeds, graph,
adjacent turns), the query embedding, authentication, fusion, the trace write, reinforcement and the JSON body are
timed from outside (outermost call only); the rest of the handler is the remainder. Database round trips are counted
per query. Reports the machine's load average beside the numbers: on a shared 2-vCPU machine the split, not the
absolute time, is what compares across runs.

The script only wraps names it finds, so the same file runs against an older tree (copy it into that tree's
``bench/`` and point ``--ingest`` at this tree's cached ingest) and old and new can alternate in one shell loop.

Runs on the conversation's cached ingest of ``bench/locomo.py`` (made first if this code has none), or on another
tree's (``--ingest``/``--cache``). Run:
``PYTHONPATH=shared:infra:. .venv/bin/python bench/query_stages.py --conversation 0``
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import shutil
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_env import ROOT, load_handler  # noqa: I001  # first: paths and environment before the service imports
from locomo import CACHE, Api, cached_ingest
from locomo_data import default_data_path, load

# (module, attribute path, label): what is timed besides the RetrievalStore methods, where it exists in the tree
STAGES = (
    ('agent_memory.api.http', 'authenticate', 'auth'),  # trees that import it at the top of api/http.py
    ('agent_memory.domain.auth', 'authenticate', 'auth'),  # trees that import it inside data_plane
    ('agent_memory.domain.retrieval', 'fuse', 'fusion'),
    ('agent_memory.domain.retrieval', 'with_neighbours', 'fusion'),
    ('agent_memory.db.trace_store', 'TraceStore.write', 'trace write'),
    ('agent_memory.db.lifecycle_store', 'LifecycleStore.reinforce', 'reinforce'),
    ('agent_memory.db.memory_store', 'MemoryStore.apply', 'trace + reinforce tx'),
)


class Stages:
    def __init__(self) -> None:
        self.times: dict[str, list[float]] = defaultdict(list)
        self.cpu: dict[str, float] = defaultdict(float)
        self.depth = 0
        self.round_trips = 0

    def wrap(self, owner: Any, name: str, label: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.depth += 1
            started, cpu = time.perf_counter(), time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                self.depth -= 1
                if self.depth == 0:
                    self.times[label].append((time.perf_counter() - started) * 1000)
                    self.cpu[label] += (time.process_time() - cpu) * 1000

        setattr(owner, name, timed)

    def wrap_path(self, module: str, path: str, label: str) -> None:
        try:
            owner: Any = importlib.import_module(module)
        except ImportError:
            return
        *parents, name = path.split('.')
        for parent in parents:
            owner = getattr(owner, parent, None)
        if owner is not None and hasattr(owner, name):
            self.wrap(owner, name, label)

    def count_round_trips(self, database_class: Any) -> None:
        original: Callable[..., Any] = database_class.query

        @functools.wraps(original)
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.round_trips += 1
            return original(*args, **kwargs)

        database_class.query = counted


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else (values[0] if values else 0.0)


def services_module() -> Any:
    try:
        return importlib.import_module('agent_memory.composition')
    except ImportError:  # trees before the composition root
        return importlib.import_module('agent_memory.api.services')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, default=default_data_path(ROOT))
    parser.add_argument('--conversation', type=int, default=0)
    parser.add_argument('--questions', type=int, default=40)
    parser.add_argument('--repeats', type=int, default=3, help='each question this many times, interleaved')
    parser.add_argument('--ingest', help="the cached ingest's code version (default: this code's)")
    parser.add_argument('--cache', type=Path, default=CACHE, help='where the cached ingests are (default: this tree)')
    parser.add_argument('--label', default=str(ROOT), help='printed with the results')
    args = parser.parse_args()
    conv = load(args.data, [args.conversation])[0]
    source = args.cache / f'{args.ingest}-{conv.index}' if args.ingest else cached_ingest(conv, args.data, False)
    manifest = json.loads((source / 'manifest.json').read_text())
    work = Path(tempfile.mkdtemp(prefix='stages-'))
    try:
        shutil.copytree(source / 'db', work / 'db')
        os.environ['AGENT_MEMORY_DB_URL'] = f'surrealkv://{work / "db"}'
        from agent_memory.db.connection import Database
        from agent_memory.db.retrieval_store import RetrievalStore

        services = services_module().get_services()
        services.embedder.warm()
        handler = load_handler('retrieval')
        api = Api(handler, manifest['context'], manifest['key'])
        stages = Stages()
        for name in [n for n in vars(RetrievalStore) if not n.startswith('_') and callable(getattr(RetrievalStore, n))]:
            stages.wrap(RetrievalStore, name, name)
        stages.wrap(services.embedder, 'embed', 'embed query')
        for module, path, label in STAGES:
            stages.wrap_path(module, path, label)
        stages.wrap(handler, 'json_response', 'json body')
        stages.count_round_trips(Database)
        questions = [q.text for q in conv.questions[:: max(1, len(conv.questions) // args.questions)]][: args.questions]
        api.post('query', {'query': questions[0], 'k': 10}, 'warm')  # also migrates the copy
        stages.times.clear()
        stages.cpu.clear()
        stages.round_trips = 0
        load_before, cpu_before = os.getloadavg()[0], time.process_time()
        for repeat in range(args.repeats):
            for question in questions:
                api.post('query', {'query': question, 'k': 10, 'mode': 'hybrid'}, f'pass {repeat + 1}')
        load_after, cpu_total = os.getloadavg()[0], (time.process_time() - cpu_before) * 1000
        total = [t for r in range(args.repeats) for t in api.times[f'pass {r + 1}']]
        calls = len(total)
        load_avg = f'load average {load_before:.1f} → {load_after:.1f} on {os.cpu_count()} CPUs'
        print(f'{args.label}: conversation {conv.index}, {calls} hybrid queries; {load_avg}')
        # CPU = process time (this thread, the embedded engine's threads): less sensitive to other processes' load
        print(f'{"stage":<22} {"calls/query":>11} {"ms/query":>9} {"CPU ms/query":>12} {"p50 ms/call":>12} {"p95 ms/call":>12}')
        accounted, accounted_cpu = 0.0, 0.0
        for label, values in sorted(stages.times.items(), key=lambda kv: -sum(kv[1])):
            accounted += sum(values)
            accounted_cpu += stages.cpu[label]
            print(
                f'{label:<22} {len(values) / calls:>11.1f} {sum(values) / calls:>9.1f} {stages.cpu[label] / calls:>12.1f} '
                f'{pct(values, 50):>12.2f} {pct(values, 95):>12.2f}'
            )
        print(f'{"rest of the handler":<22} {"":>11} {(sum(total) - accounted) / calls:>9.1f} {(cpu_total - accounted_cpu) / calls:>12.1f}')
        print(f'{"database round trips":<22} {stages.round_trips / calls:>11.1f}')
        whole = f'{statistics.mean(total):>9.1f} {cpu_total / calls:>12.1f} {pct(total, 50):>12.1f} {pct(total, 95):>12.1f}'
        print(f'{"POST /query":<22} {1:>11.1f} {whole}')
        for r in range(args.repeats):  # the first pass meets every word for the first time
            times = api.times[f'pass {r + 1}']
            spread = f'{pct(times, 50):>12.1f} {pct(times, 95):>12.1f}'
            print(f'{f"  pass {r + 1}":<22} {"":>11} {statistics.mean(times):>9.1f} {"":>12} {spread}')
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
