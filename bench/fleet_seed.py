"""The tenants of ``bench/fleet.py``, seeded once into one SurrealKV database and kept under ``bench/.cache/fleet/``.

A synthetic tenant of size ``s`` holds ``s`` facts (``bench/retrieval.py``'s people, one fact each of five per person,
entities and attributes inserted as that bench does) and ``s`` passages (one turn each, "Name: I work at …", stored
through the real facts handler, ``POST /facts/batch`` with ``infer: none``, a session per 100 turns: the adjacent-turn
lookup reads a whole session, ~276 ms for one of 5,000 turns, docs/search-decision.md). Vectors are precomputed: real MiniLM
embeddings (cached by ``bench_vectors``) for the first ``REAL_ROWS`` facts, passages and their people, which every
tenant of up to 5,000 rows uses; beyond them (the 20k and 100k tenants) a row's vector is composed from real
embeddings of its parts (the person's name parts plus the fact's or passage's words), so no run embeds 100k texts.
LoCoMo dev conversations are ingested as further tenants exactly as ``bench/locomo.py`` ingests them (stage 0
extraction through the facts and worker handlers), with the map from every passage and fact to its LoCoMo turn, so
recall@10 can be scored on their questions. Every tenant's HNSW indexes are rebuilt after the load, as the hourly
sweep does. The data set is read from ``../shared/data/locomo`` and never copied here.

The cache is keyed by ``SEED_VERSION``, the scale and ``locomo.code_version()`` (the code that shapes stored rows and
the migrations): a run works on a copy, since reads reinforce and the fleet writes.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import importlib
import io
import json
import math
import random
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from bench_env import ROOT, CollectingQueue, load_handler  # noqa: I001  # first: paths and environment before the service imports
from bench_vectors import cached_vectors
from locomo_data import default_data_path, load
from retrieval import FIRST, KEYS, LAST, MIDDLE, QUESTIONS, facts, load_rows, person

from agent_memory.domain.plan_embeddings import attribute_text, entity_text

# bench/locomo.py: the key of what shapes stored rows, and the map from hits to LoCoMo turns (by name: mypy checks
# that script on its own)
LOCOMO: Any = importlib.import_module('locomo')

CACHE = ROOT / 'bench' / '.cache' / 'fleet'
SEED_VERSION = 2  # bump when what this module stores changes (2: a session per 100 passages, not one for all)
REAL_ROWS = 5000  # synthetic rows with real embeddings; beyond, composed vectors (module docstring)
BATCH = 100  # messages per POST /facts/batch (the route's maximum)
SAYINGS = {
    'employer': 'I work at {v} these days.',
    'home_city': 'We finally settled down in {v}.',
    'job_title': 'I have been working as a {v} for a few years now.',
    'favourite_food': 'Nothing beats {v} on a Friday night.',
    'hobby': 'Most weekends I spend my time on {v}.',
    'current_project': 'Right now I am busy with {v}.',
    'pet': 'At home we have {v}.',
    'preferred_editor': 'I write all my code in {v}.',
    'car': 'I get around with {v}.',
    'next_trip': 'My next holiday is {v}.',
}


@dataclass(frozen=True)
class Scale:
    name: str
    contexts: int  # synthetic tenants of 200..max_size rows (log-uniform)
    max_size: int
    large: tuple[int, ...]  # and these large ones
    locomo: tuple[int, ...]  # LoCoMo dev conversations as tenants


SCALES = {
    'tiny': Scale('tiny', 3, 400, (), (0,)),  # developing this bench
    'small': Scale('small', 20, 2000, (5000,), (0, 1)),
    'default': Scale('default', 60, 5000, (5000, 20_000), (0, 1, 2, 3, 4)),
    'full': Scale('full', 200, 5000, (20_000, 100_000), (0, 1, 2, 3, 4)),
}


def sizes(scale: Scale) -> list[int]:
    """Rows per synthetic tenant (facts; as many passages), the large ones last."""
    rng = random.Random(31)
    low, high = math.log(200), math.log(scale.max_size)
    return [int(round(math.exp(rng.uniform(low, high)))) for _ in range(scale.contexts)] + list(scale.large)


def passage(name: str, key: str, value: str) -> str:
    return f'{name}: {SAYINGS[key].format(v=value)}'


def question(rows: list[tuple[str, str, str]], i: int) -> str:
    name, key, _ = rows[i]
    return QUESTIONS[key].format(n=name)


def cache_dir(scale: Scale) -> Path:
    spec = json.dumps({'seed': SEED_VERSION, 'scale': asdict(scale), 'code': LOCOMO.code_version()}, sort_keys=True)
    return CACHE / f'{scale.name}-{hashlib.sha256(spec.encode()).hexdigest()[:12]}'


# ---------------------------------------------------------------- vectors ---


def _unit(rows: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: np.ndarray[Any, Any] = (rows / np.where(norms == 0, 1, norms)).astype(np.float32)
    return unit


class Vectors:
    """Vectors of synthetic facts, passages and people: real up to ``REAL_ROWS`` (cached), composed beyond."""

    def __init__(self, model: Any, largest: int) -> None:
        rows = facts(max(largest, REAL_ROWS))
        real = rows[:REAL_ROWS]
        self.facts = cached_vectors(model, 'fleet-facts', SEED_VERSION, [attribute_text(*r) for r in real])
        self.passages = cached_vectors(model, 'fleet-passages', SEED_VERSION, [passage(*r) for r in real])
        self.people = cached_vectors(model, 'fleet-people', SEED_VERSION, [entity_text(person(i), 'person') for i in range(REAL_ROWS // 5)])
        self.rows = rows
        if largest <= REAL_ROWS:
            return
        parts = [*FIRST, *MIDDLE, *LAST]
        part = dict(zip(parts, cached_vectors(model, 'fleet-name-parts', SEED_VERSION, parts), strict=True))
        pairs = [(k, v) for k, values in KEYS.items() for v in values]
        said = cached_vectors(model, 'fleet-sayings', SEED_VERSION, [SAYINGS[k].format(v=v) for k, v in pairs])
        stated = cached_vectors(model, 'fleet-statements', SEED_VERSION, [f'{k.replace("_", " ")}: {v}' for k, v in pairs])
        said_of, stated_of = dict(zip(pairs, said, strict=True)), dict(zip(pairs, stated, strict=True))
        people = [person(i) for i in range(REAL_ROWS // 5, (largest + 4) // 5)]
        composed = _unit(np.asarray([sum(part[p] for p in name.split()) for name in people], dtype=np.float32))
        self.people = np.concatenate([self.people, composed])
        extra = rows[REAL_ROWS:largest]
        who = self.people[[i // 5 for i in range(REAL_ROWS, largest)]]
        self.facts = np.concatenate([self.facts, _unit(who + np.asarray([stated_of[(k, v)] for _, k, v in extra]))])
        self.passages = np.concatenate([self.passages, _unit(who + np.asarray([said_of[(k, v)] for _, k, v in extra]))])

    def lookup(self, size: int) -> dict[str, list[float]]:
        """Passage text → vector for a tenant's passages (what the facts handler embeds)."""
        return {passage(*row): self.passages[i].tolist() for i, row in enumerate(self.rows[:size])}


class LookupModel:
    """The loaded model with precomputed vectors for known texts (the rest go to the model)."""

    def __init__(self, model: Any) -> None:
        self.model, self.model_id, self.dimension = model, model.model_id, model.dimension
        self.known: dict[str, list[float]] = {}
        self.missed = 0

    def embed(self, texts: Any) -> list[list[float]]:
        missing = [t for t in texts if t not in self.known]
        self.missed += len(missing)
        found = dict(zip(missing, self.model.embed(missing), strict=True)) if missing else {}
        return [self.known[t] if t in self.known else found[t] for t in texts]


# ---------------------------------------------------------------- seeding (its own process) ---


def _post(fn: Any, ctx: str, key: str, path: str, body: dict[str, Any], expect: int) -> dict[str, Any]:
    from local_runtime.events import LocalContext, http_event

    event = http_event('POST', f'/api/v1/{ctx}{path}', headers={'authorization': f'Bearer {key}'}, body=body)
    with contextlib.redirect_stdout(io.StringIO()):
        response = fn.lambda_handler(event, LocalContext())
    assert response['statusCode'] == expect, response
    result: dict[str, Any] = json.loads(response['body'])
    return result


class Seeder:
    """Seeds the tenants of one scale through the service's own code on embedded SurrealKV."""

    def __init__(self, out: Path) -> None:
        import os

        os.environ['AGENT_MEMORY_DB_URL'] = f'surrealkv://{out / "db"}'
        from agent_memory.composition import get_services

        self.services = get_services()
        self.model = self.services.embedder.warm()
        self.lookup = LookupModel(self.model)
        self.services.embedder._loaded = self.lookup  # the handlers embed through it: known passages cost no model call
        self.facts_fn, self.sessions_fn = load_handler('facts'), load_handler('sessions')
        self.tenants: list[dict[str, Any]] = []

    def tenant(self, ctx: str, kind: str, size: int, **extra: Any) -> str:
        from agent_memory.domain.contexts import create_context, mint_context_key, patch_context

        create_context(self.services.control, self.services.store, ctx, {})
        patch_context(self.services.control, ctx, {'rate_limit': {'enabled': False}})  # a fleet replays traffic back to back
        key = mint_context_key(self.services.control, ctx, 'admin', 'fleet')
        self.tenants.append({'id': ctx, 'key': key, 'kind': kind, 'size': size, **extra})
        return key

    def rebuild(self, ctx: str) -> None:
        """The HNSW indexes rebuilt after the bulk load, as the hourly sweep does (3.x searches a bulk-loaded index
        brute-force slowly until then)."""
        lifecycle = self.services.lifecycle(ctx)
        for table, (count, _) in lifecycle.vector_index_growth().items():
            if count:
                lifecycle.rebuild_vector_index(table, count, dt.datetime.now(dt.UTC))

    def synthetic(self, ctx: str, size: int, vectors: Vectors) -> None:
        key = self.tenant(ctx, 'synthetic', size)
        rows = vectors.rows[:size]
        names = sorted({name for name, _, _ in rows})
        by_name = {person(i): vectors.people[i] for i in range((size + 4) // 5)}
        name_vectors = np.asarray([by_name[x] for x in names], dtype=np.float32)
        with contextlib.redirect_stderr(io.StringIO()):  # load_rows' progress lines
            load_rows(self.services, ctx, rows, vectors.facts[:size], names, name_vectors)
        self.lookup.known = vectors.lookup(size)
        _post(self.sessions_fn, ctx, key, '/sessions', {'id': 'fleet'}, 201)  # the fleet's writes
        texts = [passage(*row) for row in rows]
        for start in range(0, size, BATCH):  # a session per batch: conversations, not one endless session
            session = f'seed{start // BATCH:04d}'
            _post(self.sessions_fn, ctx, key, '/sessions', {'id': session}, 201)
            messages = [{'role': 'user', 'content': t} for t in texts[start : start + BATCH]]
            _post(self.facts_fn, ctx, key, '/facts/batch', {'messages': messages, 'infer': 'none', 'sessionId': session}, 200)
        self.lookup.known = {}
        self.rebuild(ctx)

    def locomo(self, index: int) -> None:
        """One LoCoMo conversation as ``bench/locomo.py`` ingests it, a tenant with its questions and evidence map."""
        from agent_memory.domain import lifecycle
        from agent_memory.domain.context_config import effective_config
        from local_runtime.events import LocalContext, sqs_record

        (conv,) = load(default_data_path(ROOT), [index])
        queue = CollectingQueue()
        self.services.queue = queue
        worker_fn = load_handler('extraction_worker')
        ctx = f'locomo{conv.index}'
        questions = [{'text': q.text, 'category': q.category, 'evidence': sorted(q.evidence)} for q in conv.questions]
        key = self.tenant(ctx, 'locomo', len(conv.turns), conversation=conv.index, questions=questions)
        turn_ids: dict[str, str] = {}
        for session in conv.sessions:
            messages = [{'role': 'user', 'content': t.text, 'ts': session.spoken_at.isoformat(), 'name': t.speaker} for t in session.turns]
            body = _post(self.facts_fn, ctx, key, '/facts/batch', {'messages': messages, 'infer': 'full'}, 202)
            turn_ids.update(zip((t.dia_id for t in session.turns), body['turnIds'], strict=True))
            for n, job in enumerate(queue.jobs, 1):
                record = sqs_record(f'm{n}', job.to_json(), f'r{n}', 1, 'arn:aws:sqs:local:0:fleet', int(time.time() * 1000))
                with contextlib.redirect_stdout(io.StringIO()):
                    assert worker_fn.lambda_handler({'Records': [record]}, LocalContext()) == {'batchItemFailures': []}
            queue.jobs.clear()
        lifecycle.reindex(self.services.lifecycle(ctx), effective_config(None), dt.datetime.now(dt.UTC))
        self.rebuild(ctx)
        self.tenants[-1]['by_ref'] = LOCOMO.source_turns(self.services.store(ctx), {v: k for k, v in turn_ids.items()})


def seed(scale: Scale, out: Path) -> None:
    """Seed every tenant of ``scale`` into ``out/db`` and write ``out/manifest.json``."""
    seeder, started = Seeder(out), time.perf_counter()
    all_sizes = sizes(scale)
    vectors = Vectors(seeder.model, max(all_sizes))
    for n, size in enumerate(all_sizes):
        seeder.synthetic(f'fleet{n:03d}', size, vectors)
        print(f'  fleet{n:03d}: {size:,} facts and passages ({time.perf_counter() - started:.0f} s)', file=sys.stderr)
    for index in scale.locomo:
        seeder.locomo(index)
        print(f'  locomo{index} ingested ({time.perf_counter() - started:.0f} s)', file=sys.stderr)
    manifest = {'scale': asdict(scale), 'seed_version': SEED_VERSION, 'code': LOCOMO.code_version(), 'tenants': seeder.tenants,
                'seconds': time.perf_counter() - started, 'texts_the_model_embedded': seeder.lookup.missed}  # fmt: skip
    (out / 'manifest.json').write_text(json.dumps(manifest))


def seeded(scale: Scale) -> tuple[Path, dict[str, Any]]:
    """The cached seed of ``scale`` (seeded now, in a child process, when missing): its directory and manifest."""
    import shutil
    import subprocess

    target = cache_dir(scale)
    if not (target / 'manifest.json').exists():
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        print(f'seeding {scale.name} scale into {target} (once; later runs reuse it)', file=sys.stderr)
        subprocess.run([sys.executable, __file__, scale.name, str(target)], check=True)
    manifest: dict[str, Any] = json.loads((target / 'manifest.json').read_text())
    return target, manifest


if __name__ == '__main__':
    seed(SCALES[sys.argv[1]], Path(sys.argv[2]))
