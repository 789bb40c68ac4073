"""Retrieval: /query latency at 1k / 10k / 100k facts, HNSW recall@10 against exact search, and the rebuild fix.

For each size, N attributes (over N/5 person entities) with real MiniLM embeddings are inserted into a
fresh context the way the service stores them (index defined at migration time, rows after). Then,
measured side by side in one run:

* HNSW KNN on ``attribute.embedding`` (k = 10, ef = 80): latency p50/p95 and recall@10 against an exact
  cosine top 10 over the same vectors — before and after the hourly sweep's ``REBUILD INDEX``;
* the same exact search in numpy (the brute-force baseline);
* ``POST /query`` through the retrieval handler (auth, embedding the query, the lists, fusion, trace write,
  reinforcement) in hybrid / vector / bm25 mode: latency p50/p95 and whether the fact the question asks
  about is ranked 1st (hit@1) or in the top 10 (hit@10).

Embeddings are cached under ``bench/.cache`` (``bench_vectors.py``; 100k facts + 20k people take ~30 min at ~60 texts/s
on a loaded 2-vCPU machine: fill the cache first with ``nice -n 10 … --embed-only``).
Run: ``make bench-retrieval`` (``--sizes 1000,10000`` for a quicker run).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import json
import os
import random
import statistics
import sys
import time
from typing import Any

import numpy as np  # noqa: E402
from bench_env import STATEMENT_ROWS, STATEMENTS_PER_QUERY, insert_sql, load_handler  # noqa: E402,I001  # first: paths and environment before the service imports
from bench_vectors import cache_path, cached_vectors  # noqa: E402
from surrealdb import RecordID  # noqa: E402

from agent_memory.composition import Services, get_services  # noqa: E402
from agent_memory.domain.contexts import create_context, mint_context_key  # noqa: E402
from agent_memory.domain.plan_embeddings import attribute_text, entity_text  # noqa: E402
from agent_memory.tuning import TUNING  # noqa: E402
from local_runtime.events import LocalContext, http_event  # noqa: E402

EF_SEARCH = TUNING.ef_search

LARGEST = 100_000  # embeddings are computed (once, cached) for this many facts; smaller sizes use a prefix
TEXTS_VERSION = 1  # bump when facts() / person() / the embedded text changes
QUERIES = 100
nan = float('nan')
FIRST = (
    'Ada',
    'Bo',
    'Cai',
    'Dana',
    'Eli',
    'Fay',
    'Gus',
    'Hana',
    'Ivo',
    'Jun',
    'Kai',
    'Lena',
    'Milo',
    'Nia',
    'Omar',
    'Pia',
    'Quin',
    'Rosa',
    'Sami',
    'Tara',
    'Uma',
    'Vik',
    'Wen',
    'Xia',
    'Yara',
    'Zed',
)
MIDDLE = (
    'Ray',
    'Lou',
    'Max',
    'Joy',
    'Ann',
    'Lee',
    'Sol',
    'Kim',
    'Ivy',
    'Rex',
    'Mae',
    'Jay',
    'Zoe',
    'Ben',
    'Eve',
    'Tom',
    'Amy',
    'Roy',
    'Uma',
    'Ned',
    'Liv',
    'Gil',
    'Ora',
    'Cy',
    'Bea',
    'Hal',
    'Ida',
    'Len',
    'Mia',
    'Ozzy',
)
LAST = (
    'Abbott',
    'Berg',
    'Costa',
    'Diaz',
    'Engel',
    'Fox',
    'Gray',
    'Horn',
    'Ito',
    'Jansen',
    'Kowal',
    'Lund',
    'Moreau',
    'Novak',
    'Ortiz',
    'Park',
    'Quist',
    'Reyes',
    'Sato',
    'Tanaka',
    'Umar',
    'Vance',
    'Wolff',
    'Xu',
    'Young',
    'Zamora',
    'Adler',
    'Brandt',
    'Chen',
    'Dubois',
    'Ekström',
    'Fischer',
    'Garcia',
    'Haddad',
    'Ibarra',
    'Jovanovic',
    'Kim',
    'Lopez',
    'Mbeki',
    'Nakamura',
)
KEYS = {
    'employer': ['Acme Robotics', 'Blue Harbor Bank', 'Cobalt Labs', 'Delta Foods', 'Evergreen Health', 'Fjord Games'],
    'home_city': ['Berlin', 'Lisbon', 'Osaka', 'Toronto', 'Nairobi', 'Lima', 'Oslo', 'Austin'],
    'job_title': ['data engineer', 'product manager', 'nurse', 'chef', 'architect', 'teacher', 'pilot'],
    'favourite_food': ['ramen', 'tacos', 'paella', 'dumplings', 'falafel', 'risotto'],
    'hobby': ['rock climbing', 'chess', 'sailing', 'pottery', 'birdwatching', 'salsa dancing'],
    'current_project': ['the billing migration', 'a mobile app rewrite', 'the warehouse robots', 'the Q3 audit'],
    'pet': ['a grey cat', 'a beagle', 'two goldfish', 'a parrot', 'no pets'],
    'preferred_editor': ['VS Code', 'Vim', 'Emacs', 'IntelliJ', 'Zed'],
    'car': ['a red Fiat', 'a Tesla', 'no car', 'a Volvo estate', 'a cargo bike'],
    'next_trip': ['Iceland in March', 'Japan in May', 'a week in Crete', 'Patagonia in November'],
}
QUESTIONS = {
    'employer': 'Where does {n} work?',
    'home_city': 'Which city does {n} live in?',
    'job_title': "What is {n}'s job?",
    'favourite_food': "What is {n}'s favourite food?",
    'hobby': 'What does {n} do for fun?',
    'current_project': 'What is {n} working on right now?',
    'pet': 'Does {n} have a pet?',
    'preferred_editor': 'Which editor does {n} use?',
    'car': 'What car does {n} drive?',
    'next_trip': 'Where is {n} travelling next?',
}


def person(i: int) -> str:
    """Distinct names with no token shared by everyone (26 × 30 × 40 = 31,200 people)."""
    return f'{FIRST[i % len(FIRST)]} {MIDDLE[(i // len(FIRST)) % len(MIDDLE)]} {LAST[(i // (len(FIRST) * len(MIDDLE))) % len(LAST)]}'


def facts(n: int) -> list[tuple[str, str, str]]:
    keys = list(KEYS)
    rng = random.Random(7)
    return [(person(i // 5), keys[(i * 3 + i // 5) % len(keys)], rng.choice(KEYS[keys[(i * 3 + i // 5) % len(keys)]])) for i in range(n)]


def corpus_vectors(services: Services, size: int) -> tuple[np.ndarray[Any, Any], dict[str, np.ndarray[Any, Any]]]:
    """Vectors of the first ``size`` facts and of their people: sliced from the cached vectors of ``LARGEST`` facts when
    those exist (``facts(n)`` is a prefix of ``facts(m)`` for n < m, and people are ``person(0..)`` in order), else
    computed (and cached) for ``size``."""
    model = services.embedder.warm()
    full = [attribute_text(n, k, v) for n, k, v in facts(LARGEST)]
    count = LARGEST if cache_path('retrieval-attributes', TEXTS_VERSION, model.model_id, full).exists() else size
    vectors = cached_vectors(model, 'retrieval-attributes', TEXTS_VERSION, full[:count])
    people = [person(i) for i in range((count + 4) // 5)]
    people_vectors = cached_vectors(model, 'retrieval-people', TEXTS_VERSION, [entity_text(n, 'person') for n in people])
    return vectors[:size], dict(zip(people[: (size + 4) // 5], people_vectors, strict=False))


def load_rows(services: Services, ctx: str, rows: list[tuple[str, str, str]], vectors: np.ndarray[Any, Any] | None,
              names: list[str], name_vectors: np.ndarray[Any, Any] | None) -> float:  # fmt: skip
    """Insert the people and their facts; without vectors (``--lexical-only``) the rows carry no embedding."""

    def embedding(found: np.ndarray[Any, Any] | None, i: int) -> dict[str, Any]:
        return {} if found is None else {'embedding': found[i].tolist()}

    store = services.store(ctx)
    now = dt.datetime.now(dt.UTC)
    started = time.perf_counter()
    entities = [
        {'id': RecordID('entity', ['person', name.lower()]), 'name': name, 'type': 'person', 'memory_category': 'identity',
         'importance_base': 1.0, 'scope_sets': [['/']], 'created_at': now, 'updated_at': now, **embedding(name_vectors, i)}
        for i, name in enumerate(names)
    ]  # fmt: skip
    step = STATEMENT_ROWS * STATEMENTS_PER_QUERY
    for start in range(0, len(entities), step):
        store.db.query(store.database, *insert_sql('entity', entities[start : start + step]))
    for start in range(0, len(rows), step):
        batch = [
            {'entity': RecordID('entity', ['person', name.lower()]), 'key': key, 'value': value, 'memory_category': 'knowledge',
             'importance_base': 0.8, 'confidence': 1.0, 'source': {'kind': 'upsert'}, 'valid_from': now, 'created_at': now,
             'confirmed_at': now, 'scope_sets': [['/']], **embedding(vectors, start + j)}
            for j, (name, key, value) in enumerate(rows[start : start + step])
        ]  # fmt: skip
        store.db.query(store.database, *insert_sql('attribute', batch))
        if (start // step) % 40 == 0:
            print(f'  inserted {start + len(batch)}/{len(rows)} attributes', file=sys.stderr)
    return time.perf_counter() - started


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float('nan')


def knn(services: Services, ctx: str, qv: np.ndarray[Any, Any], ids: list[str],
        exact: list[set[str]]) -> tuple[list[float], float]:  # fmt: skip
    store = services.store(ctx)
    times, recalls = [], []
    for i, vector in enumerate(qv):
        started = time.perf_counter()
        sql = f'SELECT id, vector::distance::knn() AS d FROM attribute WHERE embedding <|10,{EF_SEARCH}|> $v ORDER BY d;'
        rows = store.q(sql, v=vector.tolist())[0]
        times.append((time.perf_counter() - started) * 1000)
        recalls.append(len({str(r['id'].id) for r in rows} & exact[i]) / 10)
    return times, statistics.mean(recalls)


def query_api(fn: Any, ctx: str, key: str, questions: list[tuple[str, str]], mode: str) -> tuple[list[float], float, float]:
    times, top1, top10 = [], 0, 0
    for question, expected in questions:
        event = http_event('POST', f'/api/v1/{ctx}/query', headers={'authorization': f'Bearer {key}'},
                           body={'query': question, 'k': 10, 'mode': mode})  # fmt: skip
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):  # the handler's EMF metrics line
            response = fn.lambda_handler(event, LocalContext())
        times.append((time.perf_counter() - started) * 1000)
        assert response['statusCode'] == 200, response
        hits = [h['text'] for h in json.loads(response['body'])['hits']]
        top1 += bool(hits) and hits[0] == expected
        top10 += expected in hits
    return times, top1 / len(questions), top10 / len(questions)


def asked(rows: list[tuple[str, str, str]], size: int, count: int = QUERIES) -> list[tuple[str, str]]:
    """``count`` questions, each about one fact, with the hit text that answers it."""
    picks = random.Random(size).sample(range(size), min(count, size))
    return [(QUESTIONS[rows[i][1]].format(n=rows[i][0]), attribute_text(*rows[i])) for i in picks]


def new_context(services: Services, size: int) -> tuple[str, str]:
    ctx = f'benchr{size}t{int(time.time())}'
    create_context(services.control, services.store, ctx, {})
    return ctx, mint_context_key(services.control, ctx, 'admin', 'bench')


def run_lexical(size: int, services: Services, fn: Any, queries: int = QUERIES) -> list[dict[str, Any]]:
    """The lexical list alone (``mode: bm25``) over rows without embeddings: for sizes whose embeddings would take
    longer to compute than the run may last (100k on a loaded 2-vCPU machine)."""
    rows = facts(size)
    ctx, key = new_context(services, size)
    load_s = load_rows(services, ctx, rows, None, sorted({name for name, _, _ in rows}), None)
    times, hit1, hit10 = query_api(fn, ctx, key, asked(rows, size, queries), 'bm25')
    services.control.delete_context(ctx)
    services.drop_context(ctx)
    return [{'size': size, 'state': 'lexical only', 'load_s': load_s, 'bm25_p50': pct(times, 50), 'bm25_p95': pct(times, 95),
             'bm25_hit1': hit1, 'bm25_hit10': hit10, 'bm25_load': os.getloadavg()[0]}]  # fmt: skip


def run(size: int, services: Services, fn: Any, queries: int = QUERIES) -> list[dict[str, Any]]:
    rows = facts(size)
    names = sorted({name for name, _, _ in rows})
    vectors, by_name = corpus_vectors(services, size)
    name_vectors = np.asarray([by_name[n] for n in names], dtype=np.float32)
    questions = asked(rows, size, queries)
    qv = np.asarray(services.embedder.embed([q for q, _ in questions]), dtype=np.float32)
    ctx, key = new_context(services, size)
    load_s = load_rows(services, ctx, rows, vectors, names, name_vectors)
    store = services.store(ctx)
    ids = [str(r) for r in store.q('SELECT VALUE record::id(id) FROM attribute;')[0]]
    stored = np.asarray(list(store.q('SELECT VALUE embedding FROM attribute;')[0]), dtype=np.float32)
    # exact baseline over the same vectors, in the same order as ids
    started = time.perf_counter()
    exact = []
    for v in qv:
        scores = stored @ v
        top = np.argpartition(-scores, 10)[:10]
        exact.append({ids[j] for j in top})
    numpy_ms = (time.perf_counter() - started) * 1000 / len(qv)
    results: list[dict[str, Any]] = []
    before_t, before_r = knn(services, ctx, qv[:50], ids, exact[:50])
    api_before, _, _ = query_api(fn, ctx, key, questions[:30], 'hybrid')
    results.append({'size': size, 'state': 'no rebuild', 'knn_p50': pct(before_t, 50), 'knn_p95': pct(before_t, 95), 'recall': before_r,
                    'hybrid_p50': pct(api_before, 50), 'hybrid_p95': pct(api_before, 95), 'load': os.getloadavg()[0]})  # fmt: skip
    lifecycle = services.lifecycle(ctx)
    started = time.perf_counter()
    for table, (count, _) in lifecycle.vector_index_growth().items():
        if count:
            lifecycle.rebuild_vector_index(table, count, dt.datetime.now(dt.UTC))
    rebuild_s = time.perf_counter() - started
    after_t, after_r = knn(services, ctx, qv, ids, exact)
    row: dict[str, Any] = {'size': size, 'state': 'after rebuild', 'knn_p50': pct(after_t, 50), 'knn_p95': pct(after_t, 95),
                           'recall': after_r, 'numpy_ms': numpy_ms, 'load_s': load_s, 'rebuild_s': rebuild_s,
                           'load': os.getloadavg()[0]}  # fmt: skip
    for mode in ('hybrid', 'vector', 'bm25'):
        times, hit1, hit10 = query_api(fn, ctx, key, questions, mode)
        row.update({f'{mode}_p50': pct(times, 50), f'{mode}_p95': pct(times, 95), f'{mode}_hit1': hit1, f'{mode}_hit10': hit10,
                    f'{mode}_load': os.getloadavg()[0]})  # fmt: skip
    results.append(row)
    services.control.delete_context(ctx)
    services.drop_context(ctx)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--sizes', default='1000,10000,100000')
    parser.add_argument('--lexical-only', action='store_true', help='no embeddings: mode bm25 alone (see run_lexical)')
    parser.add_argument('--embed-only', action='store_true', help=f'fill the embedding cache for {LARGEST:,} facts and stop')
    parser.add_argument('--questions', type=int, default=QUERIES, help='questions asked per size and mode')
    args = parser.parse_args()
    services = get_services()
    services.embedder.warm()
    if args.embed_only:
        corpus_vectors(services, LARGEST)  # the people's vectors are computed after the facts'
        return
    fn = load_handler('retrieval')
    results = []
    for size in (int(s) for s in args.sizes.split(',')):
        print(f'size {size}', file=sys.stderr)
        results.extend((run_lexical if args.lexical_only else run)(size, services, fn, args.questions))
    print(f'\nHNSW (k=10, ef={EF_SEARCH}) vs exact, and the hourly rebuild')
    columns = ('KNN p50 ms', 'KNN p95 ms', 'recall@10', 'numpy ms/q', 'load s', 'rebuild s', 'load avg')
    print(f'{"facts":>7} {"state":<14} ' + ' '.join(f'{c:>10}' for c in columns))
    for r in (r for r in results if 'knn_p50' in r):
        values = (r['knn_p50'], r['knn_p95'], r['recall'], r.get('numpy_ms', nan), r.get('load_s', nan), r.get('rebuild_s', nan),
                  r['load'])  # fmt: skip
        print(f'{r["size"]:>7} {r["state"]:<14} ' + ' '.join(f'{v:>10.3f}' for v in values))
    print('\nPOST /query through the handler (after the rebuild unless noted)')
    print(f'{"facts":>7} {"mode":<22} {"p50 ms":>8} {"p95 ms":>8} {"hit@1":>6} {"hit@10":>7} {"load avg":>8}')
    for r in results:
        if r['state'] == 'no rebuild':
            print(f'{r["size"]:>7} {"hybrid, no rebuild":<22} {r["hybrid_p50"]:>8.1f} {r["hybrid_p95"]:>8.1f} {"":>6} {"":>7} '
                  f'{r["load"]:>8.1f}')  # fmt: skip
            continue
        for mode in (m for m in ('hybrid', 'vector', 'bm25') if f'{m}_p50' in r):
            print(f'{r["size"]:>7} {mode:<22} {r[f"{mode}_p50"]:>8.1f} {r[f"{mode}_p95"]:>8.1f} '
                  f'{r[f"{mode}_hit1"]:>6.2f} {r[f"{mode}_hit10"]:>7.2f} {r[f"{mode}_load"]:>8.1f}')  # fmt: skip


if __name__ == '__main__':
    main()
