"""What a row's vector costs on every write, by the declared type of the vector field, and what each declaration refuses.

The lead's experiment (Session 4) made repeatable: one ``mem://`` table per declaration, SCHEMAFULL like the service's,
with a text, an int and a 384-float vector (random unit vectors) under an HNSW index like the service's. Timed by the
engine (each statement's own ``time``): one INSERT of ``--rows`` rows, then an UPDATE of the int on every row, which
never touches the vector, ``--repeats`` times (median printed). Then each declaration is offered the bad vectors the
service must never store, on a 4-dimension copy, and the table says which it refuses.

    PYTHONPATH=shared:infra:.:bench .venv/bin/python bench/vector_field_types.py --rows 500

``--migration-rows N`` also times migration 0017 itself on N attribute rows with vectors under the old declaration (its
one-off scan for stored vectors the new ASSERT refuses). ``--knn-ingest DIR`` applies 0017 to a copy of a cached
LoCoMo ingest made before it (``bench/.cache/locomo/<version>-<n>``; the copy is written, never the cache) and
compares every stored vector and 20 KNN answers per vector table, before and after. ``--lengths 48,384`` times the
UPDATE under ``any`` (no index) by the vector's length.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import random
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_env import ROOT  # noqa: F401,I001  # first: paths and environment before the service imports
from lifecycle_designs import load
from vector_types import VECTOR_FIELDS, declare, unit_vector

from agent_memory.db.connection import Database
from agent_memory.db.migrations import ensure_migrated, load_migrations

PLAIN_ASSERT = 'ASSERT $value IS NONE OR vector::magnitude($value) IN 0>..3.4e38'
DECLARATIONS = {  # label: the field's clause (None: no vector field at all)
    'option<array<float>> (before 0017)': 'TYPE option<array<float>>',
    'array<float>': 'TYPE array<float>',
    'array<float, 384>': 'TYPE array<float, 384>',
    'option<array>': 'TYPE option<array>',
    'array': 'TYPE array',
    'any': 'TYPE any',
    'any + magnitude ASSERT (0017)': f'TYPE any {PLAIN_ASSERT}',
    'any + per-element ASSERT': 'TYPE any ASSERT $value IS NONE OR array::all($value, |$x| type::is_number($x))',
    'no vector field': None,
}
BAD = {
    'wrong length': [0.5, 0.5, 0.5],
    'string element': ['a', 0.5, 0.5, 0.5],
    'nested arrays': [[0.5, 0.5], [0.5, 0.5]],
    'NaN': [math.nan, 0.5, 0.5, 0.5],
    'infinity': [math.inf, 0.5, 0.5, 0.5],
    'all zeros': [0.0, 0.0, 0.0, 0.0],
    'beyond float32': [1e39, 0.5, 0.5, 0.5],
}
UNITS = {'ns': 1e-6, 'µs': 1e-3, 'ms': 1.0, 's': 1000.0}


def engine_ms(db: Database, sql: str, params: dict[str, Any] | None = None) -> float:
    """The engine's own time for the last statement of ``sql`` (no client encoding or decoding in it)."""
    raw = db._connection().query_raw(f'USE NS {db.namespace} DB vft;\n{sql}', params or {})
    result = raw['result'][-1]
    if result['status'] != 'OK':
        raise RuntimeError(result['result'])
    match = re.fullmatch(r'([\d.]+)(ns|µs|ms|s)', result['time'])
    assert match, result['time']
    return float(match[1]) * UNITS[match[2]]


def refuses(db: Database, table: str, clause: str, value: list[Any]) -> bool:
    db.query('vft', f'DEFINE TABLE {table} SCHEMAFULL; DEFINE FIELD e ON {table} {clause}; '
                    f'DEFINE INDEX {table}_e ON {table} FIELDS e HNSW DIMENSION 4 DIST COSINE TYPE F32 EFC 150 M 12;')  # fmt: skip
    raw = db._connection().query_raw(f'USE NS {db.namespace} DB vft;\nCREATE {table} SET e = $e;', {'e': value})
    return 'error' in raw or raw['result'][-1]['status'] != 'OK'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--rows', type=int, default=500)
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--migration-rows', type=int, default=0, help='also time migration 0017 on this many attribute rows')
    parser.add_argument('--knn-ingest', type=Path, help='a cached LoCoMo ingest made before 0017: vectors and KNN before/after')
    parser.add_argument('--lengths', help='comma-separated vector lengths: the UPDATE under `any` by length')
    args = parser.parse_args()
    db = Database('mem://', 'vectorfields')
    rows = [{'text': f'word{i} other{i % 7}', 'n': 0, 'e': unit_vector(i)} for i in range(args.rows)]
    print(f'# Vector field declarations: {args.rows} rows × 384 floats, HNSW index, engine ms; {os.cpu_count()} CPUs\n')
    print(f'| declaration | INSERT {args.rows} rows | UPDATE of another field, median of {args.repeats} | per row | load avg |')
    print('|---|---|---|---|---|')
    for k, (label, clause) in enumerate(DECLARATIONS.items()):
        table = f't{k}'
        vector = '' if clause is None else (f'DEFINE FIELD e ON {table} {clause}; DEFINE INDEX {table}_e ON {table} FIELDS e '
                                            'HNSW DIMENSION 384 DIST COSINE TYPE F32 EFC 150 M 12;')  # fmt: skip
        db.query('vft', f'DEFINE TABLE {table} SCHEMAFULL; DEFINE FIELD text ON {table} TYPE string; '
                        f'DEFINE FIELD n ON {table} TYPE int; {vector}')  # fmt: skip
        batch = rows if clause is not None else [{'text': r['text'], 'n': 0} for r in rows]
        insert = engine_ms(db, f'INSERT INTO {table} $rows RETURN NONE;', {'rows': batch})
        update = statistics.median(engine_ms(db, f'UPDATE {table} SET n = n + 1 RETURN NONE;') for _ in range(args.repeats))
        print(f'| {label} | {insert:.0f} | {update:.0f} | {update / args.rows:.3f} | {os.getloadavg()[0]:.1f} |', flush=True)
    plain = DECLARATIONS['any + magnitude ASSERT (0017)']
    print('\n| bad vector (4-d index) | option<array<float>> (before 0017) | any | any + magnitude ASSERT (0017) |')
    print('|---|---|---|---|')
    for j, (case, value) in enumerate(BAD.items()):
        verdicts = [refuses(db, f'r{j}_{n}', clause, value) for n, clause in enumerate(('TYPE option<array<float>>', 'TYPE any', plain))]
        print(f'| {case} | ' + ' | '.join('refused' if v else '**stored**' for v in verdicts) + ' |')
    if args.migration_rows:
        time_migration(db, args.migration_rows)
    if args.knn_ingest:
        compare_knn(args.knn_ingest)
    if args.lengths:
        by_length(db, args, [int(n) for n in args.lengths.split(',')])


def by_length(db: Database, args: argparse.Namespace, lengths: list[int]) -> None:
    print(f'\n| vector length (`any`, no index) | UPDATE of another field, {args.rows} rows, ms | µs per element per row | load avg |')
    print('|---|---|---|---|')
    for length in [0, *lengths]:
        table = f'len{length}'
        db.query('vft', f'DEFINE TABLE {table} SCHEMAFULL; DEFINE FIELD n ON {table} TYPE int; DEFINE FIELD e ON {table} TYPE any;')
        batch = [{'n': 0, **({'e': unit_vector(i, length)} if length else {})} for i in range(args.rows)]
        engine_ms(db, f'INSERT INTO {table} $rows RETURN NONE;', {'rows': batch})
        update = statistics.median(engine_ms(db, f'UPDATE {table} SET n = n + 1 RETURN NONE;') for _ in range(args.repeats))
        per_element = f'{1000 * update / args.rows / length:.2f}' if length else '–'
        print(f'| {length} | {update:.0f} | {per_element} | {os.getloadavg()[0]:.1f} |', flush=True)


def time_migration(db: Database, n: int) -> None:
    """Migration 0017 as the runner applies it (one transaction) on ``n`` vector rows declared as before it."""
    ensure_migrated(db, 'mig', 'context')
    declare(db, 'mig', 'coerced')
    load(db, 'mig', n, dt.datetime.now(dt.UTC), 'importance_base', 0.34, vectors=True)
    sql = next(m for m in load_migrations('context') if m.version == 17).sql
    started, cpu = time.perf_counter(), time.process_time()
    db.query('mig', f'BEGIN TRANSACTION;\n{sql}\nCOMMIT TRANSACTION;')
    wall, used = time.perf_counter() - started, time.process_time() - cpu
    print(f'\nMigration 0017 on {n:,} attribute rows with vectors: {wall:.2f} s, {used:.2f} CPU s '
          f'({1000 * used / n:.3f} CPU ms per row), load {os.getloadavg()[0]:.1f}')  # fmt: skip


def compare_knn(ingest: Path) -> None:
    """0017 on a copy of a real ingest: every stored vector and 20 sampled KNN answers per table, before and after."""
    work = Path(tempfile.mkdtemp(prefix='vft-knn-'))
    try:
        shutil.copytree(ingest / 'db', work / 'db', ignore=shutil.ignore_patterns('LOCK'))
        db = Database(f'surrealkv://{work / "db"}', 'agent_memory')
        [database] = [d for d in db.query('control', 'INFO FOR NS;')[0]['databases'] if d.startswith('ctx_')]
        applied = db.query(database, 'SELECT VALUE record::id(id) FROM schema_migration;')[0]
        if 17 in applied:
            raise SystemExit(f'{ingest} was migrated to 0017 already')
        rng = random.Random(3)
        probes = {}
        for table, field in VECTOR_FIELDS:
            stored = db.query(database, f'SELECT VALUE {field} FROM {table} WHERE {field} IS NOT NONE;')[0]
            probes[table] = rng.sample(stored, min(20, len(stored)))

        def state() -> dict[str, Any]:
            found: dict[str, Any] = {}
            for table, field in VECTOR_FIELDS:
                found[table] = db.query(database, f'SELECT id, {field} FROM {table} ORDER BY id;')[0]
                knn = f'SELECT id, vector::distance::knn() AS d FROM {table} WHERE {field} <|10,40|> $v ORDER BY d;'
                found[f'{table} knn'] = [db.query(database, knn, {'v': v})[0] for v in probes[table]]
            return found

        before = state()
        db.query(database, next(m for m in load_migrations('context') if m.version == 17).sql)
        after = state()
        counts = ', '.join(f'{table} {len(before[table])} rows / {len(probes[table])} KNN' for table, _ in VECTOR_FIELDS)
        verdict = 'identical' if before == after else '**DIFFERENT**'
        print(f'\n0017 on a copy of {ingest.name} ({counts}): vectors and KNN answers {verdict}')
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
