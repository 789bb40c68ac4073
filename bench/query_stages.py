"""Where a hybrid ``POST /query`` spends its time, stage by stage, on a cached LoCoMo ingest.

Every public method of ``RetrievalStore`` (the candidate lists, the document-frequency probe, seeds, graph,
adjacent turns) and the query embedding are timed from outside (outermost call only), the rest of the handler
(auth, fusion, trace write, reinforcement, JSON) is the remainder. Reports the machine's load average beside the
numbers: on a shared 2-vCPU machine the split, not the absolute time, is what compares across runs.

Needs an ingest made by ``bench/locomo.py`` (same code version). Run:
``PYTHONPATH=shared:infra:. .venv/bin/python bench/query_stages.py --conversation 0``
"""

from __future__ import annotations

import argparse
import functools
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
from locomo import CACHE, Api, code_version
from locomo_data import default_data_path, load

REPEATS = 3  # each question this many times, interleaved, so a burst of load hits every stage alike


class Stages:
    def __init__(self) -> None:
        self.times: dict[str, list[float]] = defaultdict(list)
        self.depth = 0

    def wrap(self, owner: Any, name: str, label: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.depth += 1
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.depth -= 1
                if self.depth == 0:
                    self.times[label].append((time.perf_counter() - started) * 1000)

        setattr(owner, name, timed)


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else (values[0] if values else 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, default=default_data_path(ROOT))
    parser.add_argument('--conversation', type=int, default=0)
    parser.add_argument('--questions', type=int, default=40)
    parser.add_argument('--ingest', help="the cached ingest's code version (default: this code's)")
    args = parser.parse_args()
    conv = load(args.data, [args.conversation])[0]
    source = CACHE / f'{args.ingest or code_version()}-{conv.index}'
    manifest = json.loads((source / 'manifest.json').read_text())
    work = Path(tempfile.mkdtemp(prefix='stages-'))
    try:
        shutil.copytree(source / 'db', work / 'db')
        os.environ['AGENT_MEMORY_DB_URL'] = f'surrealkv://{work / "db"}'
        from agent_memory.composition import get_services
        from agent_memory.db.retrieval_store import RetrievalStore

        services = get_services()
        services.embedder.warm()
        api = Api(load_handler('retrieval'), manifest['context'], manifest['key'])
        stages = Stages()
        for name in [n for n in vars(RetrievalStore) if not n.startswith('_') and callable(getattr(RetrievalStore, n))]:
            stages.wrap(RetrievalStore, name, name)
        stages.wrap(services.embedder, 'embed', 'embed query')
        questions = [q.text for q in conv.questions[:: max(1, len(conv.questions) // args.questions)]][: args.questions]
        api.post('query', {'query': questions[0], 'k': 10}, 'warm')
        stages.times.clear()
        load_before = os.getloadavg()[0]
        for repeat in range(REPEATS):
            for question in questions:
                api.post('query', {'query': question, 'k': 10, 'mode': 'hybrid'}, f'pass {repeat + 1}')
        load_after = os.getloadavg()[0]
        total = [t for r in range(REPEATS) for t in api.times[f'pass {r + 1}']]
        calls = len(total)
        load_avg = f'load average {load_before:.1f} → {load_after:.1f} on {os.cpu_count()} CPUs'
        print(f'conversation {conv.index}: {calls} hybrid queries; {load_avg}')
        print(f'{"stage":<22} {"calls/query":>11} {"ms/query":>9} {"p50 ms/call":>12} {"p95 ms/call":>12}')
        accounted = 0.0
        for label, values in sorted(stages.times.items(), key=lambda kv: -sum(kv[1])):
            accounted += sum(values)
            print(f'{label:<22} {len(values) / calls:>11.1f} {sum(values) / calls:>9.1f} {pct(values, 50):>12.2f} {pct(values, 95):>12.2f}')
        print(f'{"rest of the handler":<22} {"":>11} {(sum(total) - accounted) / calls:>9.1f}')
        print(f'{"POST /query":<22} {1:>11.1f} {statistics.mean(total):>9.1f} {pct(total, 50):>12.1f} {pct(total, 95):>12.1f}')
        for r in range(REPEATS):  # the first pass meets every word for the first time
            times = api.times[f'pass {r + 1}']
            print(f'{f"  pass {r + 1}":<22} {"":>11} {statistics.mean(times):>9.1f} {pct(times, 50):>12.1f} {pct(times, 95):>12.1f}')
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
