"""Semantic response cache (CONTRACT §8): what it saves through the real /chat handler, and what a lookup costs.

Part 1, cache economics. The chat handler runs in-process on API Gateway v2 events, on an embedded
SurrealDB, with the local MiniLM embeddings. Synthesis goes through the real ``LlmComposer`` and
``openai`` client to the local OpenAI-compatible test server (``tests/support/llm_server.py``, echo mode),
which simulates a model that takes 500 ms. The facts from ``bench/data/paraphrase_workload.json`` are
seeded with POST /facts (``infer: triples``). Three workloads are replayed as first-turn /chat calls
(no sessionId), each in a fresh context whose ``response_cache.similarity_threshold`` is set with PATCH,
under the old rule (embedding only: the question key is patched to None) and the new one (question key too):

* **paraphrase**: every paraphrase of every intent (26 × 10), both sides of the tuning near-miss pairs and
  the 75 unrelated questions, shuffled (fixed seed). The split the question-key rule was built on.
* **held-out**: the same for the 8 held-out intents and the held-out near-miss pairs, never tuned on.
* **repeat-heavy**: each intent is asked 10 times. Seven of those are exact or near-exact repeats of
  its first paraphrase (verbatim twice, lower-cased, with or without "?", capitalised, with "please"),
  and three are other paraphrases. The 75 unrelated questions are mixed in. Run at 0.92 by default.

A curve of hit and wrong-hit rate against the threshold (0.70–0.98) comes from the exact replay of each
paraphrase workload, old rule vs new, plus the workload issue 13 measured (paraphrase without the pairs).

For each run the script reports the hit rate, the wrong-hit rate, LLM calls against the no-cache
baseline, tokens avoided, and latency of hits and misses. A wrong hit is a hit whose reused answer was
made for another intent or for an unrelated question. The intent behind every answer is tracked by its
response traceId, and a hit is followed to its source through ``reused_from`` on its stored response
trace. An exact-cosine replay of the same sequence in numpy is printed next to each run, to show what a
perfect nearest-neighbour search would have served.

Part 2, lookup cost against trace count. This part writes N servable trace pairs (a retrieval and a response trace, the
rows /chat writes for an answer that may be served) with set-based INSERTs: 25-row statements, 125 pairs per round trip.
Each row's question is a distinct template question with its real local-model embedding (``bench/trace_questions.py``,
cached on disk) and question key. Some rows fail a filter: another fingerprint, or older than the freshness window.
``TraceStore.cache_candidates`` (keyless: the similarity KNN) is timed before and after the HNSW rebuild that the hourly
sweep runs, and again once 1,000 more rows have been added after that rebuild, beside the bare KNN it wraps and an exact
numpy brute force over the same vectors and filters; the load average is printed beside every sample.

Run: ``make bench-cache`` (or ``PYTHONPATH=shared:infra:. .venv/bin/python bench/cache.py``). Part 1
(2,440 /chat calls, ``--latency 0``) took 37 minutes on 2 vCPUs shared with other test runs (2026-12-01);
part 2 took about 4.5 minutes and peaked at 5.3 GB of RSS (2026-11-30): the 100k-trace context holds
2.7 GB after loading and REBUILD INDEX roughly doubles that. Progress goes to stderr and the tables to
stdout. Nothing in this script asserts on timings.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import itertools
import json
import math
import os
import platform
import random
import resource
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

from bench_env import ROOT, STATEMENT_ROWS, STATEMENTS_PER_QUERY, insert_sql, load_handler  # noqa: E402,I001  # first: paths and environment before the service imports

os.environ.setdefault('AGENT_MEMORY_MANAGEMENT_KEY', 'bench-management-key')
# Multi-threaded OpenBLAS gemv has an ~8 ms wake-up floor on this 2-vCPU VM (1k rows: 0.03 ms, 3k rows: 8 ms);
# single-threaded numpy is the honest brute-force baseline.
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')

import numpy as np  # noqa: E402
import trace_questions  # noqa: E402
from bench_vectors import cache_path  # noqa: E402

from agent_memory.clock import new_id, utcnow  # noqa: E402
from agent_memory.composition import Services, get_services  # noqa: E402
from agent_memory.config import get_settings  # noqa: E402
from agent_memory.db.memory_store import MemoryStore  # noqa: E402
from agent_memory.db.records import rid  # noqa: E402
from agent_memory.db.sdk import vector as bound_vector  # noqa: E402
from agent_memory.db.trace_reads import TraceReads  # noqa: E402
from agent_memory.db.trace_rows import _response_content as response_content  # noqa: E402  # the write path's own row
from agent_memory.db.trace_store import TraceStore  # noqa: E402
from agent_memory.domain import question_key as question_keys  # noqa: E402
from agent_memory.domain.context_config import ResponseCacheConfig  # noqa: E402
from agent_memory.domain.contexts import create_context, mint_context_key  # noqa: E402
from agent_memory.domain.question_key import QuestionKey, Specifics, question_key, specifics  # noqa: E402
from agent_memory.domain.synthesis import LlmComposer  # noqa: E402
from agent_memory.rows.traces import ResponseTraceRow  # noqa: E402
from agent_memory.tuning import TUNING  # noqa: E402
from agent_memory.write_ops import ResponseTrace  # noqa: E402
from local_runtime.events import LocalContext, http_event  # noqa: E402
from tests.support.llm_server import LlmTestServer

CACHE_EF, CACHE_NEIGHBOURS = TUNING.cache_ef, TUNING.cache_neighbours
REINDEX_MAX_BACKLOG, REINDEX_MIN_GROWTH = TUNING.reindex_max_backlog, TUNING.reindex_min_growth
REINDEX_MIN_NEW_ROWS = TUNING.reindex_min_new_rows

WORKLOAD = ROOT / 'bench' / 'data' / 'paraphrase_workload.json'
DEFAULT_THRESHOLD = ResponseCacheConfig().similarity_threshold
WINDOW_SECONDS = ResponseCacheConfig().freshness_window_seconds


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (NaN when empty)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def fmt(value: float, digits: int = 1) -> str:
    return '-' if value is None or (isinstance(value, float) and math.isnan(value)) else f'{value:,.{digits}f}'


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = '| ' + ' | '.join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + ' |'
    rule = '|' + '|'.join('-' * (w + 2) for w in widths) + '|'
    body = ['| ' + ' | '.join(c.rjust(w) for c, w in zip(r, widths, strict=True)) + ' |' for r in rows]
    return '\n'.join([line, rule, *body])


def rss_mb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


# ==== part 0: one hit against one miss ===============================================================


def part_hit_cost(args: argparse.Namespace, services: Services, data: dict[str, Any]) -> list[str]:
    """Each of ``--hit-intents`` questions asked once (a miss: retrieval + the slow model) and then ``--hit-repeats`` times
    verbatim (hits) at the default threshold: the per-call cost issue 14 measures. Each question has a fresh context
    seeded with the same facts, so what a hit costs (the sources its answer cites, the rows it writes) does not depend on
    the questions asked before it or on how the code under test ranks them (session 2 asked them all in one context,
    where each question's stored turn competed with the facts of the next ones)."""
    server = LlmTestServer(echo_sources=True).start()
    previous = services._composer
    services._composer = LlmComposer(server.base_url, 'test-model', None, 5.0)
    try:
        bench = ChatBench(services, server, data)
        server.latency = args.latency
        hits: list[float] = []
        misses: list[float] = []
        cpu: dict[bool, list[float]] = {True: [], False: []}  # CPU ms of the whole process (the engine runs in it) per call
        cited: list[int] = []
        for intent in data['intents'][: args.hit_intents]:
            cid, key, _ = bench.fresh_context(DEFAULT_THRESHOLD)
            question = intent['paraphrases'][0]
            for n in range(1 + args.hit_repeats):
                t0, c0 = time.perf_counter(), time.process_time()
                status, body = bench.call(bench.chat_fn, 'POST', f'/api/v1/{cid}/chat', {'message': question}, key)
                elapsed_ms, cpu_ms = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
                assert status == 200, body
                if n == 0 and not body['citations']:  # an answer built from no source never seeds the cache (CONTRACT §8)
                    log(f'  skipped (answered from no source): {question}')
                    break
                assert body['cached'] is (n > 0), body
                (hits if body['cached'] else misses).append(elapsed_ms)
                cpu[bool(body['cached'])].append(cpu_ms)
                if n == 0:
                    cited.append(len(body['citations']))
            services.control.delete_context(cid)
            services.drop_context(cid)
    finally:
        services._composer = previous
        server.stop()
    log(f'  hit p50 {pct(hits, 0.5):.1f} ms, miss p50 {pct(misses, 0.5):.1f} ms')
    return [
        '## 0. One hit against one miss\n',
        table(
            [
                'LLM ms',
                'misses',
                'miss ms p50 / p95',
                'hits',
                'hit ms p50 / p95',
                'miss/hit p50',
                'CPU ms p50 hit / miss',
                'load (1 min) at the end',
            ],
            [
                [
                    f'{args.latency * 1000:.0f}',
                    str(len(misses)),
                    f'{fmt(pct(misses, 0.5))} / {fmt(pct(misses, 0.95))}',
                    str(len(hits)),
                    f'{fmt(pct(hits, 0.5))} / {fmt(pct(hits, 0.95))}',
                    f'{pct(misses, 0.5) / pct(hits, 0.5):.1f}x',
                    f'{fmt(pct(cpu[True], 0.5))} / {fmt(pct(cpu[False], 0.5))}',
                    f'{os.getloadavg()[0]:.1f}',
                ]
            ],
        ),  # fmt: skip
        f'\n{len(misses)} questions (the first paraphrase of each of the first {args.hit_intents} intents, each in a fresh context '
        f'with the same facts), each asked once and then {args.hit_repeats} times verbatim, through the /chat handler in process '
        f'(event to response); the answers cite {sum(cited)} sources in all ({", ".join(map(str, cited))}). CPU: process time per '
        'call (handler and the embedded engine, which runs in this process), the comparable figure when the machine is loaded.',
    ]


# ==== part 1: cache economics through /chat ==========================================================


@dataclass(frozen=True)
class Ask:
    text: str
    intent: str | None  # None: an unrelated question


def paraphrase_workload(data: dict[str, Any], seed: int, split: str, near_misses: bool = True) -> list[Ask]:
    """Every paraphrase of the split's intents, both sides of its near-miss pairs (each side its own intent) and the
    unrelated questions. ``tune``: the 26 intents the rule was built on; ``held_out``: intents and pairs never tuned on.
    Identical wording always shares a label; ``unrelated_same_as`` labels the unrelated questions that ask what one of
    the split's intents or near-miss questions asks. ``near_misses=False`` on ``tune`` is the workload issue 13 measured."""
    intents = data['intents'] if split == 'tune' else data['held_out_intents']
    pairs = [pair for pair in data['near_miss_pairs'] if pair['split'] == split and near_misses]
    labelled = [(p, intent['id']) for intent in intents for p in intent['paraphrases']]
    labelled += [(pair[side], f'near-miss: {pair[side]}') for pair in pairs for side in ('a', 'b')]
    same_as = {q: label for q, label in data['unrelated_same_as'][split].items() if label in {label for _, label in labelled}}
    labelled += [(q, same_as.get(q)) for q in data['unrelated']]
    by_wording: dict[str, str | None] = {}
    asks = [Ask(text, by_wording.setdefault(_wording(text), label)) for text, label in labelled]
    random.Random(seed).shuffle(asks)
    return asks


def _wording(text: str) -> str:
    return text.lower().replace("what's", 'what is').rstrip().rstrip('?').rstrip()


def near_repeats(question: str) -> list[str]:
    """Seven exact or near-exact repeats of one question, the way agents re-ask."""
    bare = question.rstrip().rstrip('?').rstrip()
    lowered = bare[0].lower() + bare[1:]
    return [
        question,  # verbatim
        question,  # verbatim again
        question.lower(),
        bare if question.rstrip().endswith('?') else f'{bare}?',  # question mark toggled
        bare[0].upper() + bare[1:] + '?',  # capitalised
        f'please, {lowered}?',
        f'{bare} please?',
    ]


def repeat_heavy_workload(data: dict[str, Any], seed: int) -> list[Ask]:
    asks = []
    for intent in data['intents']:
        first, others = intent['paraphrases'][0], intent['paraphrases'][1:4]
        asks += [Ask(text, intent['id']) for text in near_repeats(first) + others]
    asks += [Ask(q, None) for q in data['unrelated']]
    random.Random(seed).shuffle(asks)
    return asks


@dataclass
class Answer:
    intent: str | None
    tokens: int  # prompt + completion as the server reported (stored on the response trace)
    estimated_tokens: int  # characters / 4 of the request actually sent and of the completion


@dataclass
class RunResult:
    workload: str
    rule: str
    threshold: float
    latency_s: float
    calls: int = 0
    hits: int = 0
    wrong_hits: int = 0
    wrong_unrelated_source: int = 0  # wrong hits whose source answer was made for an unrelated question
    wrong_examples: list[tuple[str, str]] = field(default_factory=list)
    llm_calls: int = 0
    tokens_avoided: int = 0
    estimated_tokens_avoided: int = 0
    hit_ms: list[float] = field(default_factory=list)
    miss_ms: list[float] = field(default_factory=list)
    all_ms: list[float] = field(default_factory=list)  # every call, in order
    lookup_ms: list[float] = field(default_factory=list)  # cache_candidates + valid_scopes inside each call
    exact_hits: int = 0
    exact_wrong: int = 0
    same_decision: int = 0


class LookupTimer:
    """Times the two cache reads /chat makes (TraceStore.cache_candidates and valid_scopes) by wrapping the class methods."""

    def __init__(self) -> None:
        self.ms = 0.0
        self._originals = (TraceStore.cache_candidates, TraceStore.valid_scopes)

    def _wrap(self, method: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.ms += (time.perf_counter() - t0) * 1000

        return timed

    def install(self) -> None:
        TraceStore.cache_candidates = self._wrap(self._originals[0])  # type: ignore[method-assign]
        TraceStore.valid_scopes = self._wrap(self._originals[1])  # type: ignore[method-assign]


class ChatBench:
    def __init__(self, services: Services, server: LlmTestServer, data: dict[str, Any]) -> None:
        self.services = services
        self.server = server
        self.data = data
        self.chat_fn, self.facts_fn, self.contexts_fn = load_handler('chat'), load_handler('facts'), load_handler('contexts')
        self.management_key = get_settings().management_key
        self._vectors: dict[str, np.ndarray] = {}
        self.timer = LookupTimer()

    def call(self, function: Any, method: str, path: str, body: Any, key: str) -> tuple[int, Any]:
        event = http_event(method, path, body=body, headers={'authorization': f'Bearer {key}'})
        # With POWERTOOLS_METRICS_DISABLED the metric set is never cleared, so powertools prints an EMF blob on stdout
        # every 100 values; keep stdout for the report.
        with contextlib.redirect_stdout(io.StringIO()):
            result = function.lambda_handler(event, LocalContext())
        raw = result.get('body') or ''
        return result['statusCode'], (json.loads(raw) if raw else None)

    def fresh_context(self, threshold: float) -> tuple[str, str, MemoryStore]:
        cid = f'benchcache{uuid.uuid4().hex[:10]}'
        create_context(self.services.control, self.services.store, cid, {})
        key = mint_context_key(self.services.control, cid, 'admin', 'bench')
        triples = [{'entity': f['entity'], 'key': f['key'], 'value': f['value'], 'memory_category': f['category']}
                   for f in self.data['seed_facts']]  # fmt: skip
        status, body = self.call(self.facts_fn, 'POST', f'/api/v1/{cid}/facts', {'infer': 'triples', 'triples': triples}, key)
        assert status == 200, body
        patch = {'config': {'response_cache': {'similarity_threshold': threshold}}}
        status, body = self.call(self.contexts_fn, 'PATCH', f'/api/v1/contexts/{cid}', patch, str(self.management_key))
        assert status == 200, body
        assert body['config']['response_cache']['similarity_threshold'] == threshold, body
        return cid, key, self.services.store(cid)

    def vector(self, text: str) -> np.ndarray:
        """The vector /chat embeds for this message (one text per call, exactly as chat.py does)."""
        if text not in self._vectors:
            self._vectors[text] = np.asarray(self.services.embedder.embed([text])[0], dtype=np.float64)
        return self._vectors[text]

    def run(self, name: str, rule: str, asks: list[Ask], threshold: float, latency: float) -> RunResult:
        cid, key, store = self.fresh_context(threshold)
        self.server.latency = latency
        result = RunResult(name, rule, threshold, latency)
        answers: dict[str, Answer] = {}  # response trace id -> the intent (and cost) of the question that made it
        decisions: list[bool] = []
        llm_before = self.server.chat_calls
        started = time.monotonic()
        # old: no question key, so neither the same-question lookup nor the near-miss check (the cache before issue 13)
        keys = mock.patch.object(question_keys, 'question_key', lambda _text: None) if rule == 'old' else contextlib.nullcontext()
        with keys:
            for n, ask in enumerate(asks, 1):
                seen = len(self.server.requests)
                self.timer.ms = 0.0
                t0 = time.perf_counter()
                status, body = self.call(self.chat_fn, 'POST', f'/api/v1/{cid}/chat', {'message': ask.text}, key)
                elapsed_ms = (time.perf_counter() - t0) * 1000
                assert status == 200, body
                trace_id = body['traceId'].split(':', 1)[1]
                trace = TraceReads(store).get('response_trace', trace_id)
                assert trace is not None
                result.calls += 1
                result.all_ms.append(elapsed_ms)
                result.lookup_ms.append(self.timer.ms)
                decisions.append(bool(body['cached']))
                if body['cached']:
                    result.hits += 1
                    result.hit_ms.append(elapsed_ms)
                    assert isinstance(trace, ResponseTraceRow) and trace.reused_from is not None
                    source_id = trace.reused_from.split(':', 1)[1]
                    source = answers[source_id]
                    if source.intent is None or source.intent != ask.intent:
                        result.wrong_hits += 1
                        result.wrong_unrelated_source += source.intent is None
                        if len(result.wrong_examples) < 3:
                            result.wrong_examples.append((ask.text, self._question_of(store, source_id)))
                    result.tokens_avoided += source.tokens
                    result.estimated_tokens_avoided += source.estimated_tokens
                else:
                    result.miss_ms.append(elapsed_ms)
                    sent = [r for r in self.server.requests[seen:] if r.path.rstrip('/') == '/v1/chat/completions']
                    prompt_chars = sum(len(str(m.get('content', ''))) for r in sent for m in r.messages)
                    usage = (trace.tokens if isinstance(trace, ResponseTraceRow) else None) or {}
                    answers[trace_id] = Answer(ask.intent, int(usage.get('prompt', 0)) + int(usage.get('completion', 0)),
                                               round(prompt_chars / 4 + len(body['reply']) / 4))  # fmt: skip
                if n % 100 == 0:
                    log(f'    {name} ({rule}) @ {threshold}: {n}/{len(asks)} calls, {result.hits} hits, {time.monotonic() - started:.0f}s')
        result.llm_calls = self.server.chat_calls - llm_before
        assert result.llm_calls == result.calls - result.hits, (result.llm_calls, result.calls, result.hits)
        replay = exact_replay(asks, [self.vector(a.text) for a in asks], threshold, rule)
        result.exact_hits, result.exact_wrong = replay.hits, replay.wrong
        result.same_decision = sum(a == b for a, b in zip(decisions, replay.decisions, strict=True))
        self.services.control.delete_context(cid)
        self.services.drop_context(cid)
        return result

    def _question_of(self, store: MemoryStore, response_id: str) -> str:
        trace = TraceReads(store).get('response_trace', response_id)
        return str(trace.message) if isinstance(trace, ResponseTraceRow) else '?'


@dataclass
class Replay:
    hits: int = 0
    wrong: int = 0
    decisions: list[bool] = field(default_factory=list)


def exact_replay(asks: list[Ask], vectors: list[np.ndarray], threshold: float, rule: str) -> Replay:
    """What the cache decides for this sequence with exact cosine (every answer stays valid here). ``old``: best
    earlier miss at similarity ≥ threshold. ``new``: the newest earlier miss with the same question key (which stands in
    for similarity only at or below the default threshold), else the best one at similarity ≥ threshold whose key is not
    a near miss of this question's. Both rules reuse an answer only for a question with the same numbers, names and
    relation words (``question_key.Specifics``, issue 30)."""
    stored: list[tuple[np.ndarray, QuestionKey | None, Specifics, str | None]] = []
    replay = Replay()
    for ask, vector in zip(asks, vectors, strict=True):
        key = question_key(ask.text) if rule == 'new' else None
        with mock.patch.object(question_keys, 'question_key', lambda _text: None) if rule == 'old' else contextlib.nullcontext():
            wanted = specifics(ask.text)
        same = [
            intent
            for v, other, said, intent in stored
            if key is not None
            and other == key
            and wanted.allow_reuse(said)
            and (threshold <= DEFAULT_THRESHOLD or float(v @ vector) >= threshold)
        ]
        similar = sorted(
            (
                (float(v @ vector), intent)
                for v, other, said, intent in stored
                if not (key and other and key.conflicts_with(other)) and wanted.allow_reuse(said)
            ),
            key=lambda pair: -pair[0],
        )
        if same:
            source = same[-1]
        elif similar and similar[0][0] >= threshold:
            source = similar[0][1]
        else:
            replay.decisions.append(False)
            stored.append((vector, key, wanted, ask.intent))
            continue
        replay.decisions.append(True)
        replay.hits += 1
        replay.wrong += source is None or source != ask.intent
    return replay


def economics_rows(results: list[RunResult]) -> list[list[str]]:
    rows = []
    for r in results:
        hit_p50, miss_p50 = pct(r.hit_ms, 0.5), pct(r.miss_ms, 0.5)
        rows.append([
            r.rule,
            f'{r.threshold:.2f}' + (' *' if r.threshold == DEFAULT_THRESHOLD else ''),
            f'{r.latency_s * 1000:.0f}',
            str(r.calls),
            f'{r.hits} ({100 * r.hits / r.calls:.1f}%)',
            f'{r.wrong_hits} ({100 * r.wrong_hits / r.calls:.1f}%)',
            f'{100 * r.wrong_hits / r.hits:.0f}%' if r.hits else '-',
            f'{r.llm_calls} / {r.calls}',
            f'{r.tokens_avoided:,} / {r.estimated_tokens_avoided:,}',
            f'{fmt(hit_p50)} / {fmt(pct(r.hit_ms, 0.95))}',
            f'{fmt(miss_p50)} / {fmt(pct(r.miss_ms, 0.95))}',
            f'{miss_p50 / hit_p50:.1f}x' if r.hits else '-',
            f'{r.exact_hits} / {r.exact_wrong}',
            f'{fmt(pct(r.lookup_ms, 0.5))} / {fmt(pct(r.lookup_ms, 0.95))}',
            f'{fmt(pct(r.all_ms[:50], 0.5))} → {fmt(pct(r.all_ms[-50:], 0.5))}',
        ])  # fmt: skip
    return rows


ECONOMICS_HEADERS = ['rule', 'threshold', 'LLM ms', 'calls', 'hits (rate)', 'wrong hits (of calls)', 'wrong of hits',
                     'LLM calls / no cache', 'tokens avoided: usage / est.', 'hit ms p50 / p95', 'miss ms p50 / p95', 'miss/hit p50',
                     'exact replay: hits / wrong', 'cache lookup ms p50 / p95', 'all calls p50 ms: first 50 → last 50']  # fmt: skip


def part_economics(args: argparse.Namespace, services: Services, data: dict[str, Any]) -> list[str]:
    out: list[str] = []
    server = LlmTestServer(echo_sources=True).start()
    previous = services._composer
    services._composer = LlmComposer(server.base_url, 'test-model', None, 5.0)
    originals = (TraceStore.cache_candidates, TraceStore.valid_scopes)
    try:
        bench = ChatBench(services, server, data)
        bench.timer.install()
        workloads = {
            'paraphrase': (paraphrase_workload(data, args.seed, 'tune')[: args.asks], [float(t) for t in args.thresholds.split(',')]),
            'held-out': (
                paraphrase_workload(data, args.seed, 'held_out')[: args.asks],
                [float(t) for t in args.held_out_thresholds.split(',')],
            ),
            'repeat-heavy': (repeat_heavy_workload(data, args.seed)[: args.asks], [float(t) for t in args.repeat_thresholds.split(',')]),
        }
        results: dict[str, list[RunResult]] = {}
        for name, (asks, thresholds) in workloads.items():
            results[name] = []
            for threshold, rule in itertools.product(thresholds, args.rules.split(',')):
                latency = args.latency if (threshold == DEFAULT_THRESHOLD or args.latency_everywhere) else 0.0
                log(f'  {name} workload, {rule} rule, threshold {threshold}, LLM latency {latency * 1000:.0f} ms: {len(asks)} /chat calls')
                results[name].append(bench.run(name, rule, asks, threshold, latency))
    finally:
        TraceStore.cache_candidates, TraceStore.valid_scopes = originals  # type: ignore[method-assign]
        services._composer = previous
        server.stop()

    intents, unrelated = len(data['intents']), len(data['unrelated'])
    pairs = {split: sum(p['split'] == split for p in data['near_miss_pairs']) for split in ('tune', 'held_out')}
    out.append('## 1. Cache economics through /chat\n')
    out += curve(bench, workloads, args.seed, args.asks)
    for name, description in (
        ('paraphrase', f'every paraphrase of every intent ({intents} × 10), both sides of {pairs["tune"]} near-miss pairs, '
                       f'shuffled with {unrelated} unrelated questions (the split the question-key rule was built on)'),
        ('held-out', f'every paraphrase of {len(data["held_out_intents"])} held-out intents (× 10), both sides of '
                     f'{pairs["held_out"]} held-out near-miss pairs, shuffled with {unrelated} unrelated questions (never tuned on)'),
        ('repeat-heavy', f'each of {intents} intents asked 10× (7 exact/near-exact repeats of its first paraphrase + 3 other '
                         f'paraphrases), shuffled with {unrelated} unrelated questions'),
    ):  # fmt: skip
        asks = workloads[name][0]
        reusable = len(asks) - len({a.intent for a in asks if a.intent}) - sum(a.intent is None for a in asks)
        out.append(f'### Workload "{name}": {description}; shuffle seed {args.seed}\n')
        out.append(
            f'Upper bound: a cache that served every later ask of an intent its first answer, and never an unrelated '
            f'question, would hit {reusable}/{len(asks)} ({100 * reusable / len(asks):.1f}%).\n'
        )
        out.append(table(ECONOMICS_HEADERS, economics_rows(results[name])))
        agree = ', '.join(f'{r.rule} {r.threshold:.2f}: {r.same_decision}/{r.calls}' for r in results[name])
        out.append(f'\nSame hit/miss decision as the exact replay, call by call: {agree}')
        for r in results[name]:
            if r.wrong_examples:
                examples = '; '.join(f'"{asked}" served the answer to "{source}"' for asked, source in r.wrong_examples)
                out.append(
                    f"- wrong hits, {r.rule} rule at {r.threshold:.2f} ({r.wrong_unrelated_source} from an unrelated question's answer), "
                    f'e.g. {examples}'
                )
        out.append('')
    out.append(
        f"* = default threshold ({DEFAULT_THRESHOLD}). LLM ms = the test server's simulated completion time. "
        + (
            'Every run used it.'
            if args.latency_everywhere
            else 'Only the default-threshold runs use it; the others use 0 ms to save time (hit and wrong-hit rates do not '
            'depend on latency; only the latency columns do).'
        )  # fmt: skip
    )
    out.append(
        'wrong hit = a hit whose reused answer was made for another intent or for an unrelated question (unrelated questions '
        'have no intent), found by following reused_from on the stored response trace to the traceId of the answer served.'
    )
    out.append(
        'tokens avoided = prompt + completion of each reused answer: "usage" as the test server reported it (stored in '
        'response_trace.tokens; the server always reports 100 prompt tokens), "est." = characters / 4 of the request actually '
        'sent and of the reply.'
    )
    out.append(
        'hit/miss ms = the /chat handler call, in process, from event to response (embedding, cache lookup, retrieval, LLM, writes). '
        'Every call adds a retrieval trace and two chunks whose vectors are not in an HNSW graph until a rebuild (the hourly sweep '
        'waits for 1,000 new rows), so calls get slower through a run: see the last column and part 2.'
    )
    out.append(
        f'exact replay = the same sequence in numpy with exact cosine (top-1 over every earlier miss, threshold ≥); the service '
        f'uses HNSW with k={CACHE_NEIGHBOURS}. Every cited fact stays valid in this benchmark, because no fact is written '
        f'after seeding.'
    )
    return out


CURVE_THRESHOLDS = [round(0.70 + 0.02 * i, 2) for i in range(15)]


def curve(bench: ChatBench, workloads: dict[str, tuple[list[Ask], list[float]]], seed: int, asks_cap: int | None = None) -> list[str]:
    """Hit and wrong-hit rate against the threshold, old rule vs new, from the exact replay of each paraphrase workload
    (the /chat runs below check that the service makes the same decisions). "issue 13" is the paraphrase workload
    without the near-miss pairs, on which the issue measured 1.2 % at 0.92."""
    names = ['issue 13', 'paraphrase', 'held-out']
    headers = ['threshold'] + [f'{name} {rule}: hits / wrong' for name in names for rule in ('old', 'new')]
    rows = []
    for threshold in CURVE_THRESHOLDS:
        row = [f'{threshold:.2f}' + (' *' if threshold == DEFAULT_THRESHOLD else '')]
        for name in names:
            asks = workloads[name][0] if name in workloads else paraphrase_workload(bench.data, seed, 'tune', near_misses=False)[:asks_cap]
            vectors = [bench.vector(a.text) for a in asks]
            for rule in ('old', 'new'):
                replay = exact_replay(asks, vectors, threshold, rule)
                row.append(f'{100 * replay.hits / len(asks):.1f}% / {100 * replay.wrong / len(asks):.1f}%')
        rows.append(row)
    return ['### Hit / wrong-hit curve, old rule vs new (exact replay; % of calls)\n', table(headers, rows), '']


# ==== part 2: lookup cost against trace count ========================================================


@dataclass
class TraceSet:
    """The vectors written for one N, in numpy, with the same filter the cache applies."""

    ids: list[str] = field(default_factory=list)
    vectors: list[np.ndarray] = field(default_factory=list)
    usable: list[bool] = field(default_factory=list)  # same fingerprint, inside the freshness window

    def matrix(self) -> tuple[np.ndarray, np.ndarray]:
        return np.vstack(self.vectors).astype(np.float32), np.array(self.usable)


FP_MAIN, FP_OTHER = 'bench:read=*;labels=', 'bench:read=org/other/*;labels='
# Every row is a servable /chat answer as the write path stores it (only those carry a question vector and key: an
# unservable answer's or a /query trace's has neither, so it is not in the HNSW index the lookup searches); some fail
# the lookup's filters: another caller's visibility, or older than the freshness window.
MIX = (('cacheable', 0.8), ('other-fingerprint', 0.1), ('stale', 0.1))
TRACE_QUESTIONS = 101_000  # the largest size (100k) + the 1,000 rows added after its rebuild
PAIRS_PER_QUERY = STATEMENT_ROWS * STATEMENTS_PER_QUERY // 2  # a retrieval and a response row per pair


class TraceLoader:
    """Writes trace pairs with set-based INSERTs (``bench_env.insert_sql``): each row's question is a distinct template
    question and its vector that question's real embedding (``bench/trace_questions.py``)."""

    def __init__(self, store: MemoryStore, texts: list[str], vectors: np.ndarray, now: dt.datetime, seed: int) -> None:
        self.store, self.texts, self.vectors, self.now = store, texts, vectors, now
        self.rng = np.random.default_rng(seed)
        self.set = TraceSet()

    def rows(self, i: int, kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
        age = self.rng.uniform(WINDOW_SECONDS + 120, 86400) if kind == 'stale' else self.rng.uniform(0, WINDOW_SECONDS - 600)
        created = self.now - dt.timedelta(seconds=float(age))
        fp = FP_OTHER if kind == 'other-fingerprint' else FP_MAIN
        retrieval_id, response_id, fact_key = new_id(), new_id(), new_id()
        question = self.texts[i]
        hit = {'id': f'attribute:{fact_key}', 'table': 'attribute', 'score': 0.5, 'lists': ['vector']}
        key = question_key(question)
        retrieval = {
            'id': rid('retrieval_trace', retrieval_id), 'query': question, 'query_embedding': bound_vector(self.vectors[i].tolist()),
            'mode': 'hybrid', 'tier_entered': 3, 'tier_reason': 'cache miss: no answer at similarity ≥ 0.92; hybrid',
            'candidates': [hit], 'returned': [{**hit, 'rank': 1}], 'latency_ms': 12.0, 'visibility_fingerprint': fp,
            'session': None, 'principal': 'admin', 'endpoint': 'chat', 'source': None, 'created_at': created,
            'cache_eligible': True, 'question_key': str(key) if key else None, 'response': rid('response_trace', response_id),
        }  # fmt: skip
        cited = [{'marker': '[S1]', 'id': hit['id'], 'kind': 'attribute', 'snippet': 'user phone number: 555-0100', 'score': 0.5,
                  'role': None, 'table': 'attribute', 'key': fact_key}]  # fmt: skip
        response = ResponseTrace(
            id=response_id, endpoint='chat', message=question, reply='Your phone number is 555-0100 [S1].', model='test-model',
            tokens={'prompt': 100, 'completion': 9}, latency_ms=512.0, cached=False, cache_eligible=True, cited=cited,
            visibility_fingerprint=fp, principal='admin', created_at=created, cited_entity_refs=['person/user'],
        )  # fmt: skip
        answer = {'id': rid('response_trace', response_id), **response_content(response), 'retrieval_trace': retrieval['id']}
        return retrieval, answer

    def insert(self, first: int, count: int, label: str) -> float:
        """Rows ``first`` .. ``first + count - 1`` of the question list, PAIRS_PER_QUERY pairs per round trip."""
        kinds = [k for k, _ in MIX]
        weights = [w for _, w in MIX]
        started = last_log = time.monotonic()
        for start in range(first, first + count, PAIRS_PER_QUERY):
            retrievals, answers = [], []
            for i in range(start, min(start + PAIRS_PER_QUERY, first + count)):
                kind = str(self.rng.choice(kinds, p=weights))
                retrieval, answer = self.rows(i, kind)
                retrievals.append(retrieval)
                answers.append(answer)
                self.set.ids.append(str(retrieval['id'].id))
                self.set.vectors.append(self.vectors[i])
                self.set.usable.append(kind == 'cacheable')
            sql_a, params_a = insert_sql('retrieval_trace', retrievals, 'a')
            sql_b, params_b = insert_sql('response_trace', answers, 'b')
            self.store.db.query(self.store.database, f'{sql_a}\n{sql_b}', params_a | params_b)
            if time.monotonic() - last_log > 15:
                last_log = time.monotonic()
                done = start + PAIRS_PER_QUERY - first
                log(
                    f'    {label}: {done:,}/{count:,} pairs, {last_log - started:.0f}s, {done / (last_log - started):.0f} pairs/s, '
                    f'load {os.getloadavg()[0]:.1f}, RSS high-water {rss_mb():,} MB'
                )
        return time.monotonic() - started


@dataclass
class Timing:
    queries: int
    p50: float
    p95: float
    found: int = 0
    top1_agree: int = 0
    exact_found: int = 0
    load: float = field(default_factory=lambda: os.getloadavg()[0])  # 1-minute load average when the sample ended


def time_service(traces: TraceStore, queries: list[np.ndarray], since: dt.datetime, threshold: float, budget_s: float,
                 min_queries: int, data: TraceSet) -> Timing:  # fmt: skip
    """cache_candidates over the queries in order, until all ran or the time budget is spent (at least min_queries)."""
    matrix, usable = data.matrix()
    latencies, found, agree, exact_found = [], 0, 0, 0
    started = time.monotonic()
    for n, query in enumerate(queries):
        if n >= min_queries and time.monotonic() - started > budget_s:
            break
        t0 = time.perf_counter()
        candidates = traces.cache_candidates(query.tolist(), [FP_MAIN], since, threshold, None)
        latencies.append((time.perf_counter() - t0) * 1000)
        sims = np.where(usable, matrix @ query.astype(np.float32), -np.inf)
        best = int(np.argmax(sims))
        if sims[best] >= threshold:
            exact_found += 1
            found += bool(candidates)
            agree += bool(candidates) and candidates[0].retrieval_id == data.ids[best]
        elif candidates:
            found += 1
    return Timing(len(latencies), pct(latencies, 0.5), pct(latencies, 0.95), found, agree, exact_found)


def time_numpy(queries: list[np.ndarray], data: TraceSet, threshold: float) -> Timing:
    """The same question answered exactly: one matrix-vector product over all N, the filter mask, top k."""
    matrix, usable = data.matrix()
    latencies = []
    for query in queries:
        q = query.astype(np.float32)
        t0 = time.perf_counter()
        sims = np.where(usable, matrix @ q, -np.inf)
        top = np.argpartition(-sims, min(CACHE_NEIGHBOURS, len(sims) - 1))[:CACHE_NEIGHBOURS]
        _ = [int(i) for i in top[np.argsort(-sims[top])] if sims[i] >= threshold]
        latencies.append((time.perf_counter() - t0) * 1000)
    return Timing(len(latencies), pct(latencies, 0.5), pct(latencies, 0.95))


def postfilter_recall(queries: list[np.ndarray], data: TraceSet, threshold: float, k: int) -> tuple[int, int]:
    """Exact check of the alternative "unfiltered top-k, then filter": how often it still holds the best usable row."""
    matrix, usable = data.matrix()
    kept = total = 0
    for query in queries:
        sims = matrix @ query.astype(np.float32)
        masked = np.where(usable, sims, -np.inf)
        best = int(np.argmax(masked))
        if masked[best] < threshold:
            continue
        total += 1
        kept += best in set(np.argpartition(-sims, min(k, len(sims) - 1))[:k].tolist())
    return kept, total


BARE_KNN = (
    f'SELECT id, vector::distance::knn() AS distance FROM retrieval_trace '
    f'WHERE query_embedding <|{CACHE_NEIGHBOURS},{CACHE_EF}|> $vector ORDER BY distance;'
)


def time_bare_knn(store: MemoryStore, queries: list[np.ndarray], budget_s: float, min_queries: int) -> Timing:
    """The same KNN without the cache's WHERE filters and without fetching the answers (to isolate their cost)."""
    latencies: list[float] = []
    started = time.monotonic()
    for n, query in enumerate(queries):
        if n >= min_queries and time.monotonic() - started > budget_s:
            break
        t0 = time.perf_counter()
        store.q(BARE_KNN, vector=query.tolist())
        latencies.append((time.perf_counter() - t0) * 1000)
    return Timing(len(latencies), pct(latencies, 0.5), pct(latencies, 0.95))


def index_state(store: MemoryStore) -> str:
    info = store.q('INFO FOR INDEX retrieval_trace_embedding ON retrieval_trace;')[0] or {}
    building = info.get('building') or {}
    return f'{building.get("status", "?")}, initial {building.get("initial", "?")}, pending {building.get("pending", "?")}'


@dataclass
class SizeResult:
    size: int
    load_s: float
    rebuild_s: float
    loads: tuple[float, float]  # load average when loading and when the rebuild ended
    rss_mb: int
    state_before: str
    state_after: str
    before: Timing
    after: Timing
    again: Timing  # the same queries once more: the first pass after a rebuild pays for reading the new graph's pages
    pending: Timing
    exact: Timing
    bare_before: Timing
    bare_after: Timing
    bare_pending: Timing
    postfilter: dict[int, tuple[int, int]]


def part_lookup(args: argparse.Namespace, services: Services, data: dict[str, Any]) -> list[str]:
    out: list[str] = ['## 2. Cache lookup cost against trace count\n']
    sizes = [int(s) for s in args.sizes.split(',')]
    threshold = DEFAULT_THRESHOLD
    if max(sizes) + args.pending > TRACE_QUESTIONS:
        raise SystemExit(f'at most {TRACE_QUESTIONS:,} traces (sizes + pending): that many distinct questions are embedded')
    texts = trace_questions.questions(TRACE_QUESTIONS, args.seed)  # one cached file serves every size
    needed = max(sizes) + args.pending  # the same questions in the same order, however many are taken
    if needed < TRACE_QUESTIONS and not cache_path('trace-questions', trace_questions.VERSION, services.embedder.model_id, texts).exists():
        texts = texts[:needed]  # a small run with no full cache embeds only the rows it loads
    log(f'  {len(texts):,} distinct trace questions: embeddings from bench/.cache (computed now if missing) …')
    question_vectors = trace_questions.question_vectors(services.embedder, texts)
    log('  embedding the workload questions …')
    workload_texts = [p for i in data['intents'] for p in i['paraphrases']] + list(data['unrelated'])
    workload_vectors = np.asarray(services.embedder.embed(workload_texts), dtype=np.float64)
    results: list[SizeResult] = []
    for size in sizes:
        cid = f'benchcachelookup{size}x{uuid.uuid4().hex[:6]}'
        create_context(services.control, services.store, cid, {})
        store = services.store(cid)
        now = utcnow()
        since = now - dt.timedelta(seconds=WINDOW_SECONDS)  # fixed, so no row ages out of the window during the run
        loader = TraceLoader(store, texts, question_vectors, now, args.seed + size)
        log(f'  N={size:,}: inserting trace pairs, {PAIRS_PER_QUERY} per round trip …')
        load_s = loader.insert(0, size, f'N={size:,}')
        load_at_load = os.getloadavg()[0]
        # queries: half are near-repeats of a stored cacheable row (they should hit), half are real workload questions
        # (most should miss); interleaved, so a time-budgeted prefix is a fair sample of both
        rng = np.random.default_rng(args.seed)
        cacheable = [i for i, ok in enumerate(loader.set.usable) if ok]
        repeats = []
        for i in rng.choice(cacheable, args.queries // 2, replace=False):
            vector = loader.set.vectors[int(i)].astype(np.float64) + rng.normal(0.0, 0.005, 384)
            repeats.append(vector / np.linalg.norm(vector))
        fresh = [workload_vectors[int(i)] for i in rng.choice(len(workload_vectors), args.queries - len(repeats), replace=False)]
        queries = [q for pair in itertools.zip_longest(repeats, fresh) for q in pair if q is not None]
        traces = TraceStore(store)
        state_before = index_state(store)
        log(f'  N={size:,}: index {state_before}; timing cache_candidates before the rebuild (budget {args.before_budget:.0f}s) …')
        before = time_service(traces, queries, since, threshold, args.before_budget, args.min_before, loader.set)
        bare_before = time_bare_knn(store, queries, args.before_budget / 3, args.min_before)
        log(f'  N={size:,}: REBUILD INDEX retrieval_trace_embedding (one statement, no progress output) …')
        t0 = time.monotonic()
        services.lifecycle(cid).rebuild_vector_index('retrieval_trace', size, utcnow())
        rebuild_s = time.monotonic() - t0
        loads = (load_at_load, os.getloadavg()[0])
        state_after = index_state(store)
        log(f'  N={size:,}: rebuilt in {rebuild_s:.1f}s ({state_after}); timing {len(queries)} queries after the rebuild …')
        after = time_service(traces, queries, since, threshold, math.inf, len(queries), loader.set)
        again = time_service(traces, queries, since, threshold, math.inf, len(queries), loader.set)
        bare_after = time_bare_knn(store, queries, math.inf, len(queries))
        exact = time_numpy(queries, loader.set, threshold)
        postfilter = {k: postfilter_recall(queries, loader.set, threshold, k) for k in (CACHE_NEIGHBOURS, 2 * CACHE_NEIGHBOURS)}
        log(f'  N={size:,}: adding {args.pending:,} rows after the rebuild (as traffic would before the next sweep) …')
        loader.insert(size, args.pending, f'N={size:,} +{args.pending:,}')
        pending = time_service(traces, queries, since, threshold, args.pending_budget, args.min_before, loader.set)
        bare_pending = time_bare_knn(store, queries, args.pending_budget / 3, args.min_before)
        results.append(SizeResult(size, load_s, rebuild_s, loads, rss_mb(), state_before, state_after, before, after, again, pending, exact,
                                  bare_before, bare_after, bare_pending, postfilter))  # fmt: skip
        log(f'  N={size:,}: p50 before {before.p50:.1f} ms, after {after.p50:.1f} ms (again {again.p50:.1f}), '
            f'+{args.pending:,} {pending.p50:.1f} ms, '
            f'numpy {exact.p50:.2f} ms; RSS high-water {rss_mb():,} MB')  # fmt: skip
        services.control.delete_context(cid)
        services.drop_context(cid)

    def cell(t: Timing, counted: bool = False, digits: int = 1) -> str:
        return f'{fmt(t.p50, digits)} / {fmt(t.p95, digits)}' + (f' ({t.queries})' if counted else '') + f' @{t.load:.1f}'

    out.append('### TraceStore.cache_candidates (what /chat runs), ms p50 / p95 (queries)\n')
    out.append(table(
        ['N traces', 'before rebuild', 'after rebuild', 'after rebuild, 2nd pass', f'+{args.pending:,} rows after rebuild',
         'numpy exact, same run', 'after: found / exact had one', 'after: top-1 = exact'],
        [[f'{r.size:,}', cell(r.before, True), cell(r.after, True), cell(r.again, True), cell(r.pending, True), cell(r.exact, digits=2),
          f'{r.after.found} / {r.after.exact_found}', f'{r.after.top1_agree} / {r.after.exact_found}'] for r in results],
    ))  # fmt: skip
    out.append('')
    out.append(f'### The same KNN without the WHERE filters and without response.* (`{BARE_KNN}`), ms p50 / p95 (queries)\n')
    out.append(table(
        ['N traces', 'before rebuild', 'after rebuild', f'+{args.pending:,} rows after rebuild', 'filtered / bare: before, after, +rows'],
        [[f'{r.size:,}', cell(r.bare_before, True), cell(r.bare_after, True), cell(r.bare_pending, True),
          f'{r.before.p50 / r.bare_before.p50:.0f}x, {r.after.p50 / r.bare_after.p50:.1f}x, {r.pending.p50 / r.bare_pending.p50:.1f}x']
         for r in results],
    ))  # fmt: skip
    out.append('')
    out.append('### Load, rebuild, index state\n')
    out.append(table(
        ['N traces', 'load s (pairs/s) @load', 'REBUILD INDEX s @load', 'INFO FOR INDEX before rebuild', 'after rebuild',
         'RSS high-water MB'],
        [[f'{r.size:,}', f'{r.load_s:.1f} ({r.size / r.load_s:.0f}) @{r.loads[0]:.1f}', f'{r.rebuild_s:.1f} @{r.loads[1]:.1f}',
          r.state_before, r.state_after, f'{r.rss_mb:,}'] for r in results],
    ))  # fmt: skip
    out.append('')
    recall = '; '.join(f'N={r.size:,}: before rebuild {r.before.top1_agree}/{r.before.exact_found}, '
                       f'+{args.pending:,} rows {r.pending.top1_agree}/{r.pending.exact_found}' for r in results)  # fmt: skip
    out.append(f'Top-1 = exact in the sampled phases: {recall}.')
    if len(results) >= 2:
        a, b = results[0], results[-1]
        growth = b.size / a.size
        ratio = b.after.p50 / a.after.p50
        verdict = 'sublinear' if ratio < growth / 4 else 'NOT clearly sublinear'
        out.append(
            f'Growth {a.size:,} → {b.size:,} traces = {growth:.0f}× N. p50 grew: after rebuild {ratio:.1f}× ({verdict}); '
            f'before rebuild {b.before.p50 / a.before.p50:.0f}×; with {args.pending:,} rows added after the rebuild '
            f'{b.pending.p50 / a.pending.p50:.1f}×; bare KNN after rebuild {b.bare_after.p50 / a.bare_after.p50:.1f}×; '
            f'numpy brute force {b.exact.p50 / a.exact.p50:.1f}×.'
        )
    per_row = [(r.pending.p50 - r.after.p50) / args.pending for r in results]
    per_row_before = [r.before.p50 / r.size for r in results]
    per_row_bare = [r.bare_before.p50 / r.size for r in results]
    out.append(
        'Cost per row not yet in the HNSW graph (filtered query): '
        + ', '.join(
            f'N={r.size:,}: {1000 * c:.0f} µs (the +{args.pending:,} rows after the rebuild), {1000 * cb:.0f} µs '
            f'(before the first rebuild; bare KNN {1000 * bare:.1f} µs)'
            for r, c, cb, bare in zip(results, per_row, per_row_before, per_row_bare, strict=True)
        )  # fmt: skip
        + '.'
    )
    out.append(
        'Alternative "unfiltered KNN, then filter" (exact check in numpy): the best usable row is among the unfiltered top-k for '
        + '; '.join(
            f'N={r.size:,}: ' + ', '.join(f'k={k} {kept}/{total}' for k, (kept, total) in r.postfilter.items()) for r in results
        )  # fmt: skip
        + f' queries that have one. With this row mix ({100 * (1 - MIX[0][1]):.0f}% unusable rows, spread at random) that is cheap '
        'and nearly lossless; it fails when the nearest rows mostly belong to other fingerprints or are stale.'
    )
    last = results[-1]
    worst_pending = max(REINDEX_MIN_NEW_ROWS, min(int(REINDEX_MIN_GROWTH * last.size), REINDEX_MAX_BACKLOG))
    cost = max(per_row_bare[-1], per_row[-1])  # the +rows estimate is noisy (it can come out negative)
    out.append(
        f'The hourly sweep rebuilds after ≥ {REINDEX_MIN_NEW_ROWS:,} new rows and either ≥ {REINDEX_MIN_GROWTH:.0%} growth or '
        f'≥ {REINDEX_MAX_BACKLOG:,} rows, so a {last.size:,}-row context carries at most {worst_pending:,} un-indexed rows: at '
        f'{1000 * cost:.1f} µs per row that is about {cost * worst_pending:,.0f} ms added to a /chat cache lookup just before a '
        'rebuild (extrapolated).'
    )
    out.append(
        '\nData: each row is a distinct template question (bench/trace_questions.py) with its real local-model embedding and '
        'question key, written as /chat writes a servable answer (retrieval and response trace). Row mix: '
        + ', '.join(f'{int(w * 100)}% {k}' for k, w in MIX)
        + f' (older than the {WINDOW_SECONDS} s window). Queries: {args.queries}, interleaved: half a stored cacheable row + '
        f'σ 0.005 noise (should hit), half real workload questions (most miss). Threshold {threshold}, k={CACHE_NEIGHBOURS}, '
        f'ef={CACHE_EF}. @x = the 1-minute load average when that sample ended. Columns with a query count in parentheses '
        'ran the queries in order until a time budget '
        f'(before {args.before_budget:.0f} s, +rows {args.pending_budget:.0f} s, bare KNN a third of those; at least '
        f'{args.min_before} queries) was spent. numpy = float32 matrix-vector product over all N + mask + top-{CACHE_NEIGHBOURS}, '
        f'same vectors. "found" = queries where cache_candidates returned a candidate; "exact had one" = queries where a '
        f'usable row ≥ threshold exists.'
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--thresholds', default='0.85,0.92', help='paraphrase workload thresholds')
    parser.add_argument('--held-out-thresholds', default='0.85,0.92', help='held-out paraphrase workload thresholds')
    parser.add_argument('--repeat-thresholds', default='0.92', help='repeat-heavy workload thresholds')
    parser.add_argument('--rules', default='old,new', help='cache rules to run: old (embedding only), new (question key too)')
    parser.add_argument('--latency', type=float, default=0.5, help='simulated LLM latency (s) for the default-threshold runs')
    parser.add_argument('--latency-everywhere', action='store_true', help='use --latency for every threshold (slower)')
    parser.add_argument('--seed', type=int, default=20261130)
    parser.add_argument('--sizes', default='1000,10000,100000', help='trace counts for the lookup-cost part')
    parser.add_argument('--queries', type=int, default=120, help='lookup queries per size (after the rebuild: all of them)')
    parser.add_argument('--before-budget', type=float, default=30.0, help='seconds for the before-rebuild sample per size')
    parser.add_argument('--pending-budget', type=float, default=10.0, help='seconds for the +pending sample per size')
    parser.add_argument('--min-before', type=int, default=2, help='minimum queries in a time-budgeted sample')
    parser.add_argument('--pending', type=int, default=1000, help='rows added after the rebuild')
    parser.add_argument('--hit-intents', type=int, default=20, help='part 0: questions asked once, then repeated')
    parser.add_argument('--hit-repeats', type=int, default=5, help='part 0: verbatim repeats of each question (hits)')
    parser.add_argument('--asks', type=int, help='part 1: only the first N asks of each workload (a quick check; default: all)')
    parser.add_argument('--skip-hit-cost', action='store_true')
    parser.add_argument('--skip-economics', action='store_true')
    parser.add_argument('--skip-lookup', action='store_true')
    args = parser.parse_args()

    started = time.monotonic()
    data = json.loads(WORKLOAD.read_text())
    services = get_services()
    services.embedder.warm()
    settings = get_settings()
    report = [
        '# Semantic response cache benchmark\n',
        f'- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC; url: {settings.db_url}; embeddings: {services.embedder.model_id} '
        f'({services.embedder.dimension}-d)',
        f'- python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}',
        '',
    ]
    if not args.skip_hit_cost:
        log('part 0: one hit against one miss')
        report += part_hit_cost(args, services, data) + ['']
    if not args.skip_economics:
        log('part 1: cache economics through /chat')
        report += part_economics(args, services, data) + ['']
    if not args.skip_lookup:
        log('part 2: cache lookup cost against trace count')
        report += part_lookup(args, services, data) + ['']
    report.append(f'Wall time {time.monotonic() - started:.0f} s; process RSS high-water {rss_mb():,} MB.')
    print('\n'.join(report))


if __name__ == '__main__':
    main()
