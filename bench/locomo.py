"""Recall on LoCoMo (Maharana et al., 2024): what the memory brings back from real long conversations.

Each conversation is ingested the way a user would: one context per conversation, one ``POST /facts/batch``
(``infer: full``) per LoCoMo session with every message's ``ts`` = the session's date and text
"Speaker: text", through the real facts handler on embedded SurrealDB (SurrealKV), the extraction worker
handler draining the queue after each session (SQS event shape), then the hourly reindex sweep. Then every
question of categories 1–4 goes to ``POST /query`` (hybrid, vector, bm25), and ``POST /context`` (hybrid).

Scored per category: evidence recall@5/@10/@20 (the share of a question's evidence turns among the top k;
a passage counts through its turn, a fact through its source turn) and hit@10 (any evidence turn in the top
10). ``k`` only truncates the fused ranking, so one ``k=20`` request per question and mode gives all three
cut-offs. Baselines over the same turn texts, in the same run: Okapi BM25 (``locomo_data.Okapi``) and the
last 10 turns. Also: ``/query`` p50/p95 per conversation context, ``/context`` size (≈ tokens = chars / 4)
and the share of evidence turns it carries, ingest turns/s, and a second hybrid pass (reinforcement must
not make a repeated question worse).

The data set is CC BY-NC 4.0, for evaluation only: it is read from ``../shared/data/locomo/locomo-dev.json``
(or ``--data``) and never copied into the repository.

Ingested databases are cached under ``bench/.cache/locomo/`` (``bench_env.CACHE``) keyed by the hash of the code that shapes what
is stored (each run works on a copy, since reads reinforce); ``--fresh`` re-ingests (final numbers).
Run: ``PYTHONPATH=shared:infra:. .venv/bin/python bench/locomo.py --conversations 0,1,2 [--fast] [--fresh]``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench_env import CACHE as BENCH_CACHE  # noqa: E402,I001  # first: paths and environment before the service imports
from bench_env import ROOT, CollectingQueue, load_handler
from locomo_data import CATEGORIES, Conversation, Okapi, Question, default_data_path, load  # noqa: E402

CACHE = BENCH_CACHE / 'locomo'
K = 20
CUTS = (5, 10, 20)
MODES = ('hybrid', 'vector', 'bm25')
# What decides the stored rows: a change here means a fresh ingest (retrieval code is not part of the key;
# neither is this script's ingest(): clear bench/.cache/locomo or pass --fresh after editing it).
INGEST_CODE = (
    'shared/agent_memory/extraction',
    'shared/agent_memory/domain/facts.py',
    'shared/agent_memory/domain/reconcile.py',
    'shared/agent_memory/domain/extraction_pipeline.py',
    'shared/agent_memory/domain/extraction_worker.py',
    'shared/agent_memory/domain/plan_embeddings.py',
    'shared/agent_memory/domain/turns.py',
    'shared/agent_memory/write_ops.py',
    'shared/agent_memory/db/memory_store.py',
    'shared/agent_memory/db/write_emitters.py',
    'shared/agent_memory/models.py',
    'infra/migrations/context',
)


def code_version() -> str:
    digest = hashlib.sha256()
    for entry in INGEST_CODE:
        path = ROOT / entry
        for file in sorted(path.rglob('*')) if path.is_dir() else [path]:
            if file.is_file() and file.suffix in ('.py', '.surql'):
                digest.update(str(file.relative_to(ROOT)).encode() + file.read_bytes())
    return digest.hexdigest()[:12]


# ---------------------------------------------------------------- ingest (runs in its own process) ---


def ingest(conversations: list[Conversation], out: Path) -> None:
    """Ingest into ``out/db`` and write ``out/manifest.json`` (context ids, keys, dia_id → turn id, timings)."""
    os.environ['AGENT_MEMORY_DB_URL'] = f'surrealkv://{out / "db"}'
    from agent_memory.composition import get_services
    from agent_memory.domain import lifecycle
    from agent_memory.domain.context_config import effective_config
    from agent_memory.domain.contexts import create_context, mint_context_key
    from agent_memory.models import BatchMessage
    from local_runtime.events import LocalContext, http_event, sqs_record

    services = get_services()
    services.embedder.warm()
    queue = CollectingQueue()
    services.queue = queue
    facts_fn, worker_fn = load_handler('facts'), load_handler('extraction_worker')
    named = 'name' in BatchMessage.model_fields  # speakers are passed once the service accepts them
    for conv in conversations:
        ctx = f'locomo{conv.index}'
        create_context(services.control, services.store, ctx, {})
        key = mint_context_key(services.control, ctx, 'admin', 'bench')
        turn_ids: dict[str, str] = {}
        started = time.perf_counter()
        for session in conv.sessions:
            messages = [
                {'role': 'user', 'content': t.text, 'ts': session.spoken_at.isoformat(), **({'name': t.speaker} if named else {})}
                for t in session.turns
            ]
            event = http_event('POST', f'/api/v1/{ctx}/facts/batch', headers={'authorization': f'Bearer {key}'},
                               body={'messages': messages, 'infer': 'full'})  # fmt: skip
            with contextlib.redirect_stdout(io.StringIO()):
                response = facts_fn.lambda_handler(event, LocalContext())
            assert response['statusCode'] == 202, response
            turn_ids.update(zip((t.dia_id for t in session.turns), json.loads(response['body'])['turnIds'], strict=True))
            for n, job in enumerate(queue.jobs, 1):
                record = sqs_record(f'm{n}', job.to_json(), f'r{n}', 1, 'arn:aws:sqs:local:0:bench', int(time.time() * 1000))
                with contextlib.redirect_stdout(io.StringIO()):
                    result = worker_fn.lambda_handler({'Records': [record]}, LocalContext())
                assert result == {'batchItemFailures': []}, result
            queue.jobs.clear()
            rate = len(turn_ids) / (time.perf_counter() - started)
            print(f'  {conv.sample_id}: session {session.number} ingested, {len(turn_ids)} turns, {rate:.1f} turns/s', file=sys.stderr)
        seconds = time.perf_counter() - started
        lifecycle.reindex(services.lifecycle(ctx), effective_config(None), dt.datetime.now(dt.UTC))
        manifest = {'version': code_version(), 'named': named, 'context': ctx, 'key': key, 'turns': turn_ids, 'seconds': seconds}
        (out / 'manifest.json').write_text(json.dumps(manifest))


def child(flag: str, conv: Conversation, data: Path, target: Path, fast: bool = False) -> None:
    """Run one step for one conversation in its own process (one embedded database per process)."""
    command = [sys.executable, __file__, '--data', str(data), '--conversations', str(conv.index), flag, str(target)]
    subprocess.run(command + (['--fast'] if fast else []), check=True)


def cached_ingest(conv: Conversation, data: Path, fresh: bool) -> Path:
    """The directory of an ingest of this conversation with this code."""
    target = CACHE / f'{code_version()}-{conv.index}'
    if fresh and target.exists():
        shutil.rmtree(target)
    if not (target / 'manifest.json').exists():
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        child('--ingest-into', conv, data, target)
    return target


# ---------------------------------------------------------------- evaluation ---


class Api:
    """The retrieval handler called with API Gateway events, timed per call."""

    def __init__(self, fn: Any, ctx: str, key: str) -> None:
        self.fn, self.ctx, self.key = fn, ctx, key
        self.times: dict[str, list[float]] = defaultdict(list)

    def post(self, route: str, body: dict[str, Any], label: str) -> dict[str, Any]:
        from local_runtime.events import LocalContext, http_event

        event = http_event('POST', f'/api/v1/{self.ctx}/{route}', headers={'authorization': f'Bearer {self.key}'}, body=body)
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            response = self.fn.lambda_handler(event, LocalContext())
        self.times[label].append((time.perf_counter() - started) * 1000)
        assert response['statusCode'] == 200, response
        result: dict[str, Any] = json.loads(response['body'])
        return result


class Scores:
    """Evidence recall@5/@10/@20 and hit@10 per question, for one ranking method."""

    def __init__(self, rows: list[list[Any]] | None = None) -> None:
        self.rows: list[list[Any]] = rows or []  # [category, [recall@5, @10, @20], hit@10]

    def add(self, question: Question, ranked_turns: list[set[str]]) -> None:
        found = [len(question.evidence & set().union(*ranked_turns[:k])) / len(question.evidence) for k in CUTS]
        self.rows.append([question.category, found, bool(question.evidence & set().union(*ranked_turns[:10]))])

    def recall(self, k: int, category: int | None = None) -> float:
        values = [r[1][CUTS.index(k)] for r in self.rows if category is None or r[0] == category]
        return statistics.mean(values) if values else float('nan')

    def hit10(self, category: int | None = None) -> float:
        values = [float(r[2]) for r in self.rows if category is None or r[0] == category]
        return statistics.mean(values) if values else float('nan')


def source_turns(store: Any, turn_to_dia: dict[str, str]) -> dict[str, str]:
    """Every fact's wire id → the dia_id of the turn it was extracted from (passages map through their turn)."""
    out: dict[str, str] = {}
    for table in ('attribute', 'relates_to', 'action'):
        for row in store.q(f'SELECT VALUE [<string> id, record::id(source_turn)] FROM {table} WHERE source_turn IS NOT NONE;')[0]:
            if str(row[1]) in turn_to_dia:
                out[str(row[0])] = turn_to_dia[str(row[1])]
    for row in store.q('SELECT VALUE [<string> id, record::id(turn)] FROM memory_chunk;')[0]:
        if str(row[1]) in turn_to_dia:
            out[str(row[0])] = turn_to_dia[str(row[1])]
    return out


def trace_turns(store: Any, trace_id: str, by_ref: dict[str, str]) -> set[str]:
    """The dia_ids of everything a /context call returned (from its retrieval trace)."""
    rows = store.q('SELECT VALUE returned FROM type::record($t);', t=trace_id)[0]
    returned = rows[0] if rows else []
    return {by_ref[str(r['id'])] for r in returned if str(r['id']) in by_ref}


def progress(label: str, items: list[Question]) -> Iterator[tuple[int, Question]]:
    for i, q in enumerate(items, 1):
        if i % 25 == 0 or i == len(items):
            print(f'    {label}: {i}/{len(items)}', file=sys.stderr)
        yield i, q


def evaluate(conv: Conversation, entry: dict[str, Any], fn: Any, services: Any, questions: list[Question]) -> dict[str, Any]:
    api = Api(fn, entry['context'], entry['key'])
    store = services.store(entry['context'])
    turn_to_dia = {v: k for k, v in entry['turns'].items()}
    by_ref = source_turns(store, turn_to_dia)
    scores: dict[str, Scores] = defaultdict(Scores)

    def run(mode: str, label: str) -> None:
        for _, q in progress(f'{conv.sample_id} {label}', questions):
            hits = api.post('query', {'query': q.text, 'k': K, 'mode': mode}, label)['hits']
            scores[label].add(q, [{by_ref[h['id']]} if h['id'] in by_ref else set() for h in hits])

    run('hybrid', 'hybrid')
    run('hybrid', 'hybrid, 2nd pass')
    context_tokens, context_share = [], []
    for _, q in progress(f'{conv.sample_id} context', questions):
        body = api.post('context', {'query': q.text, 'k': 10}, 'context')
        context_tokens.append(len(body['context']) / 4)
        context_share.append(len(q.evidence & trace_turns(store, body['traceId'], by_ref)) / len(q.evidence))
    for mode in ('vector', 'bm25'):
        run(mode, mode)
    texts = [t.text for t in conv.turns]
    okapi = Okapi(texts)
    last = [{t.dia_id} for t in reversed(conv.turns[-K:])]
    for q in questions:
        scores['Okapi BM25'].add(q, [{conv.turns[i].dia_id} for i in okapi.top(q.text, K)])
        scores['last 10 turns'].add(q, last[:10])
    return {
        'scores': {label: sc.rows for label, sc in scores.items()},
        'times': api.times,
        'context_tokens': context_tokens,
        'context_share': context_share,
        'turns': len(texts),
        'all_tokens': sum(len(t) for t in texts) / 4,
    }


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))] if ordered else float('nan')


def report(results: dict[int, dict[str, Any]]) -> None:
    total: dict[str, Scores] = defaultdict(Scores)
    for r in results.values():
        for label, rows in r['scores'].items():
            total[label].rows.extend(rows)
    counts = {CATEGORIES[c]: sum(1 for row in total['hybrid'].rows if row[0] == c) for c in CATEGORIES}
    named = {r['named'] for r in results.values()}
    print(f'\nconversations {",".join(map(str, results))}; questions {counts}; speakers named: {named}')
    header = ' '.join(f'{CATEGORIES[c]:>11}' for c in CATEGORIES)
    print(f'\n{"evidence recall@10":<18} {header} {"overall":>8} {"r@5":>6} {"r@20":>6} {"hit@10":>7}')
    for label in ('hybrid', 'vector', 'bm25', 'Okapi BM25', 'last 10 turns', 'hybrid, 2nd pass'):
        s = total[label]
        per = ' '.join(f'{s.recall(10, c):>11.3f}' for c in CATEGORIES)
        print(f'{label:<18} {per} {s.recall(10):>8.3f} {s.recall(5):>6.3f} {s.recall(20):>6.3f} {s.hit10():>7.3f}')
    print(f'\n{"conversation":<12} {"turns":>6} {"ingest t/s":>11} {"query p50":>10} {"query p95":>10} {"ctx tokens":>11} '
          f'{"whole conv":>11} {"evidence in ctx":>16} {"hybrid r@10":>12} {"Okapi r@10":>11}')  # fmt: skip
    for index, r in results.items():
        hybrid = r['times']['hybrid']
        print(f'{index:<12} {r["turns"]:>6} {r["turns"] / r["seconds"]:>11.1f} {pct(hybrid, 50):>10.1f} {pct(hybrid, 95):>10.1f} '
              f'{statistics.mean(r["context_tokens"]):>11.0f} {r["all_tokens"]:>11.0f} {statistics.mean(r["context_share"]):>16.3f} '
              f'{Scores(r["scores"]["hybrid"]).recall(10):>12.3f} {Scores(r["scores"]["Okapi BM25"]).recall(10):>11.3f}')  # fmt: skip


@contextlib.contextmanager
def opened_copy(source: Path, prefix: str) -> Iterator[dict[str, Any]]:
    """A cached ingest's manifest, with the service pointed at a throwaway copy of its database (reads reinforce, so
    no evaluation may touch the cache itself); the copy is removed afterwards."""
    manifest = json.loads((source / 'manifest.json').read_text())
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        shutil.copytree(source / 'db', work / 'db')
        os.environ['AGENT_MEMORY_DB_URL'] = f'surrealkv://{work / "db"}'
        yield manifest
    finally:
        shutil.rmtree(work, ignore_errors=True)


def evaluate_copy(conv: Conversation, source: Path, out: Path, fast: bool) -> None:
    """Evaluate on a copy of the cached ingest (reads reinforce), writing the results as JSON."""
    with opened_copy(source, 'locomo-') as manifest:
        from agent_memory.composition import get_services
        from agent_memory.domain.contexts import patch_context

        services = get_services()
        services.embedder.warm()
        # a benchmark replays questions back to back: on a fast host that exceeds the context's default 1,200/minute
        patch_context(services.control, manifest['context'], {'rate_limit': {'enabled': False}})
        questions = conv.questions[::4] if fast else conv.questions
        result = evaluate(conv, manifest, load_handler('retrieval'), services, questions)
        result.update(seconds=manifest['seconds'], named=manifest['named'])
        out.write_text(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, default=default_data_path(ROOT), help='locomo-dev.json (kept outside the repository)')
    parser.add_argument('--conversations', default='0,1,2', help='indices into the file (tuning split 0-2, blind check 3-4)')
    parser.add_argument('--fast', action='store_true', help='every 4th question only')
    parser.add_argument('--fresh', action='store_true', help='ingest again even when a cached ingest of this code exists')
    parser.add_argument('--ingest-into', type=Path, help=argparse.SUPPRESS)
    parser.add_argument('--evaluate-into', type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    conversations = load(args.data, [int(i) for i in args.conversations.split(',')])
    if args.ingest_into:
        ingest(conversations, args.ingest_into)
        return
    if args.evaluate_into:
        evaluate_copy(conversations[0], cached_ingest(conversations[0], args.data, False), args.evaluate_into, args.fast)
        return
    results = {}
    with tempfile.TemporaryDirectory(prefix='locomo-results-') as tmp:
        for conv in conversations:
            cached_ingest(conv, args.data, args.fresh)
            out = Path(tmp) / f'{conv.index}.json'
            child('--evaluate-into', conv, args.data, out, args.fast)
            results[conv.index] = json.loads(out.read_text())
    report(results)


if __name__ == '__main__':
    main()
