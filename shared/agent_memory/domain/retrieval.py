"""Hybrid retrieval (CONTRACT §7.2): vector + BM25 + graph lists fused with reciprocal rank fusion.

Every list is bounded in the database; the fused pool is capped at ``pool`` (agent_memory/tuning.py) and the final score
is the RRF score weighted by importance. Tier-1 structured lookups (entity + key questions)
seed the pool and come back as ``context_hits`` when they did not make the top k.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agent_memory.clock import when
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.retrieval_store import Expansion, ListLookup, ReadFilter, RetrievalStore
from agent_memory.domain.plan_embeddings import attribute_text, entity_text
from agent_memory.embeddings import Embedder
from agent_memory.rows.candidates import Candidate
from agent_memory.rows.refs import record_key
from agent_memory.tuning import knobs

SOURCES = {'entity': 'entity', 'attribute': 'attribute', 'relates_to': 'relation', 'action': 'action', 'memory_chunk': 'memory_chunk'}
FACT_SOURCES = frozenset({'entity', 'attribute', 'relation', 'action'})
MODES = ('hybrid', 'vector', 'bm25', 'graph')
_WORD = re.compile(r"[a-z0-9][a-z0-9'_-]*")
_FIRST_PERSON = frozenset({'i', 'me', 'my', 'mine', 'myself', "i'm", "i've", "i'd", 'we', 'our', 'us'})
# Function words carry no lexical evidence: the common English stopword list (NLTK's) plus the question frame
# ("tell", "know", "remember") and negative contractions. Pronouns matter most: "her" or "his" is in a large share of
# any conversation, so left in a question it joins every lexical list as noise.
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between both
    but by can could did do does doing down during each few for from further had has have having he her here hers
    herself him himself his how i if in into is it its itself just me mine more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves i'm i've i'd i'll you're we're they're
    don't doesn't didn't won't wouldn't can't couldn't isn't aren't wasn't weren't hasn't haven't hadn't shouldn't
    tell know remember""".split()  # noqa: SIM905
)
# A question about time ("When did …?", "How long …?", "What year …?") and a time expression in a turn: a relative day
# or period, a weekday, a month name, a year. Stage 0's find_time (extraction/stage0/dates.py) also takes vague phrases
# ("school", "summer", "soon") and ranked worse here (bench/locomo.py); "may" and "march" are left out, being
# mostly verbs.
_ASKS_WHEN = re.compile(r'\b(?:when|how long|what (?:year|month|date|day|time))\b')
_WEEKDAY = 'monday|tuesday|wednesday|thursday|friday|saturday|sunday'
_DATED = re.compile(
    rf'\b(?:yesterday|today|tonight|tomorrow|recently|ago|(?:19|20)\d\d|{_WEEKDAY}|'
    r'january|february|april|june|july|august|september|october|november|december|'
    rf'last (?:night|week|weekend|month|year|summer|winter|spring|fall)|(?:this|next) (?:week|weekend|month|year|morning|evening|summer))\b'
)


@dataclass
class Hit:
    id: str
    table: str
    score: float
    text: str
    occurred_at: dt.datetime | None
    resource: dict[str, Any]
    importance: float | None
    entity_refs: tuple[str, ...]
    role: str | None = None
    position: tuple[str, int] | None = None  # a passage's (stored session key, turn seq): where its neighbours are
    turn: str | None = None  # the turn a passage was said in, or a fact extracted from
    key: Any = None  # the record key (a [type, name] list for entities)
    lists: dict[str, int] = field(default_factory=dict)  # list name -> rank (1-based)
    scope_sets: list[list[str]] | None = None  # None when not read (a cached citation)
    speaker: str | None = None  # a passage's named speaker (the message's ``name``)
    principal: str | None = None  # the principal that wrote a passage's turn

    @property
    def source(self) -> str:
        return SOURCES[self.table]

    @property
    def record(self) -> tuple[str, Any]:
        return self.table, self.key

    def wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            'id': self.id,
            'score': round(self.score, 6),
            'source': self.source,
            'text': self.text,
            'occurredAt': when(self.occurred_at),
            'resource': self.resource,
        }
        if self.role:
            body['role'] = self.role
        return body


@dataclass
class Retrieval:
    hits: list[Hit]
    context_hits: list[Hit]
    seeds: list[str]
    pool: list[Hit]
    vector: list[float] | None
    latency_ms: float
    tier_reason: str


@dataclass(frozen=True)
class Seeds:
    refs: list[str]  # every seed (graph expansion starts here)
    named: list[str]  # the self entity and entities named in the query (tier 1 looks these up)
    names: list[str]


@dataclass(frozen=True)
class Candidates:
    lists: dict[str, list[Hit]]  # list name -> hits, best first
    seeds: Seeds
    tier1: list[Hit]
    vector: list[float] | None
    adjacent: dict[str, list[Hit]] = field(default_factory=dict)  # best passage id -> its neighbouring turns' passages


@dataclass(frozen=True)
class RetrievalRequest:
    query: str
    k: int = 10
    mode: str = 'hybrid'
    where: ReadFilter | None = None
    principal_id: str = ''


def words(text: str) -> list[str]:
    """Lowercase words; a possessive's "'s" goes ("Joanna's hobbies" names Joanna)."""
    return [w[:-2] if w.endswith("'s") else w for w in _WORD.findall(text.lower().replace('\u2019', "'"))]


def query_terms(text: str) -> list[str]:
    """The query's content words, once each, in order: the terms of the full-text lists (OR semantics)."""
    return list(dict.fromkeys(content_words(text).split()))


def is_first_person(query: str) -> bool:
    """The query is about the caller ("what is my plan?"): retrieval looks up the caller's self entity."""
    return bool(_FIRST_PERSON & set(words(query)))


def content_words(text: str) -> str:
    kept = [w for w in words(text) if w not in STOP_WORDS]
    return ' '.join(kept or words(text))


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith('s') and not word.endswith('ss') else word


def _type_name(entity_ref: str | None) -> str | None:
    """``type/name`` of an entity ref (how hits name the entities they are about)."""
    return entity_ref.removeprefix('entity:') if entity_ref else None


def to_hit(row: Candidate) -> Hit:
    table, occurred = row.table, row.created_at
    if table == 'attribute':
        key = _type_name(row.entity) or '/'
        etype, name = key.split('/', 1)
        attribute = row.key or ''
        text = attribute_text(row.entity_name or name, attribute, row.value or '')
        resource: dict[str, Any] = {'kind': 'attribute', 'entityType': etype, 'name': row.entity_name or name, 'key': attribute}
        refs: tuple[str, ...] = (key,)
    elif table == 'entity':
        key = _type_name(row.ref) or '/'
        text = entity_text(row.name or '', row.type or '')
        resource = {'kind': 'entity', 'entityType': row.type, 'name': row.name}
        refs = (key,)
    elif table == 'relates_to':
        subject, obj = _type_name(row.subject) or '/', _type_name(row.object) or '/'
        label = row.label or ''
        text = f'{row.subject_name or subject} {label.replace("_", " ")} {row.object_name or obj}'
        resource = {
            'kind': 'relation',
            'label': label,
            'subjectType': subject.split('/', 1)[0],
            'subjectName': row.subject_name,
            'objectType': obj.split('/', 1)[0],
            'objectName': row.object_name,
        }
        refs = (subject, obj)
    elif table == 'action':
        actor = _type_name(row.actor) or '/'
        obj_ref = _type_name(row.object)
        text = row.summary or ''
        resource = {'kind': 'action', 'actorType': actor.split('/', 1)[0], 'actorName': row.actor_name}
        if obj_ref:
            resource.update(objectType=obj_ref.split('/', 1)[0], objectName=obj_ref.split('/', 1)[1])
        occurred = row.occurred_at or occurred
        refs = (actor, obj_ref) if obj_ref else (actor,)
    else:
        text = row.text or ''
        resource = {'kind': 'session', 'sessionId': row.session_id, 'turnId': row.turn}
        occurred = row.spoken_at or occurred  # when it was said, not when it was stored
        refs = ()
    hit = Hit(
        row.ref, table, 0.0, text, occurred, resource, row.importance, refs,
        role=row.role, key=record_key(row.ref), scope_sets=row.scope_sets, turn=row.turn, speaker=row.speaker,
        principal=row.principal,
    )  # fmt: skip
    if row.session_key and row.seq is not None:
        hit.position = (row.session_key, row.seq)
    return hit


def importance_weight(hit: Hit) -> float:
    """Importance ∈ [0, 2] maps to a weight in [0.9, 1.1]: it orders facts of similar relevance but cannot lift an
    irrelevant fact over a relevant passage (×1.1 per recall would otherwise let a few facts take every answer).
    Passages count as importance 1, whoever said them: an ingested assistant turn is evidence like any other (the
    replies /chat generates are not passages at all)."""
    if hit.table == 'memory_chunk':
        return 1.0
    return 0.9 + (hit.importance if hit.importance is not None else 1.0) / 10


def fuse(lists: dict[str, list[Hit]], pool: int | None = None) -> list[Hit]:
    """Weighted reciprocal rank fusion (``rrf_k``) over ranked lists, capped at ``pool``, weighted by importance."""
    tuned = knobs()
    merged: dict[str, Hit] = {}
    rrf: dict[str, float] = {}
    for name, listed in lists.items():
        floor = tuned.similarity_floor.get(name)
        ranked = listed if floor is None else [h for h in listed if h.score >= floor]
        for rank, hit in enumerate(ranked, start=1):
            kept = merged.setdefault(hit.id, hit)
            kept.lists[name] = rank
            rrf[hit.id] = rrf.get(hit.id, 0.0) + tuned.list_weights.get(name, 1.0) / (tuned.rrf_k + rank)
    ranked_ids = sorted(rrf, key=lambda i: rrf[i], reverse=True)[: tuned.pool if pool is None else pool]
    fused = []
    for hit_id in ranked_ids:
        hit = merged[hit_id]
        hit.score = rrf[hit_id] * importance_weight(hit)
        fused.append(hit)
    fused.sort(key=lambda h: (-h.score, h.id))
    return fused


class Retriever:
    """Two database round trips per retrieval (plus the document-frequency probe when a query term is new): the lists
    that need only the query (``RetrievalStore.lists``), then what needs their result (``RetrievalStore.expand``): the
    seeds' graph, tier 1 and the turns adjacent to the best passages."""

    def __init__(self, store: MemoryStore, embedder: Embedder) -> None:
        self.store = store
        self.search = RetrievalStore(store)
        self.embedder = embedder

    def run(self, request: RetrievalRequest, vector: list[float] | None = None) -> Retrieval:
        started = time.perf_counter()
        found = self.candidates(request, vector)
        pool = fuse(found.lists)
        if request.mode == 'hybrid':
            pool = reranked(with_neighbours(pool, found.adjacent), request.query)
        hits = pool[: request.k]
        shown = {h.id for h in hits}
        pooled = {h.id: h for h in pool}
        context_hits = [pooled.get(h.id, h) for h in found.tier1 if h.id not in shown]
        reason = f'{request.mode}: {len(pool)} candidates from {sum(1 for v in found.lists.values() if v)} lists'
        if found.tier1:
            reason += f'; tier 1 seeded {len(found.tier1)} structured rows'
        latency = (time.perf_counter() - started) * 1000
        return Retrieval(hits, context_hits, found.seeds.names, pool, found.vector, latency, reason)

    def candidates(self, request: RetrievalRequest, vector: list[float] | None = None) -> Candidates:
        """Every ranked list the request's mode asks for, each bounded and filtered in the database."""
        where = request.where
        assert where is not None
        mode = request.mode
        if vector is None and mode != 'bm25':
            vector = self.embedder.embed([request.query])[0]
        first = self.search.lists(
            where,
            dict(knobs().list_limits),
            ListLookup(
                vector=vector if mode in ('hybrid', 'vector') else None,
                terms=query_terms(request.query) if mode in ('hybrid', 'bm25') else None,
                principal=request.principal_id if is_first_person(request.query) else None,
            ),
        )
        lists: dict[str, list[Hit]] = {}
        for table, rows in first.vector.items():
            lists[f'vector:{table}'] = [self._scored(r, 1.0 - float(r.distance or 0.0)) for r in rows]
        for table, rows in first.text.items():
            lists[f'bm25:{table}'] = [self._scored(r, float(r.bm25 or 0.0)) for r in rows]
        seeds = self._seeds(request, where, lists, first.self_entities)
        expanding = mode in ('hybrid', 'graph')
        best = best_passages(lists) if mode == 'hybrid' else []
        second = self.search.expand(
            where,
            Expansion(
                seeds=seeds.refs if expanding else (),
                depths=knobs().graph_limits,
                named=seeds.named if expanding else (),
                parts=key_parts(request.query),
                turns=[h.position for h in best if h.position is not None],
            ),
            vector,
        )
        if expanding:
            graph: dict[str, Hit] = {}
            for row in second.graph:  # by depth: a fact reached again further out keeps its first place
                graph.setdefault(row.ref, to_hit(row))
            lists['graph'] = list(graph.values())
        tier1 = [to_hit(r) for r in second.tier1]
        if tier1:
            lists['tier1'] = tier1
        return Candidates(lists, seeds, tier1, vector, adjacent(best, [to_hit(r) for r in second.adjacent]))

    @staticmethod
    def _scored(row: Candidate, score: float) -> Hit:
        hit = to_hit(row)
        hit.score = score
        return hit

    def _seeds(self, request: RetrievalRequest, where: ReadFilter, lists: dict[str, list[Hit]], own: Sequence[Candidate]) -> Seeds:
        """Entities the query is about: the caller's self entity for first-person questions (``own``), entities named
        in the query, and otherwise the nearest ones. Only the self and named entities feed tier 1."""
        named: dict[str, str] = {_type_name(row.ref) or '/': str(row.name) for row in own}
        candidates = lists.get('vector:entity', []) + lists.get('bm25:entity', [])
        if 'bm25:entity' not in lists and request.mode == 'graph':
            candidates += self._scored_entities(request.query, where)
        spoken = f' {" ".join(words(request.query))} '
        in_query = [h for h in candidates if f' {" ".join(words(h.resource["name"]))} ' in spoken]
        for hit in in_query:
            named.setdefault(hit.entity_refs[0], hit.resource['name'])
        refs = dict(named)
        if not in_query:  # nobody named: the nearest entities seed graph expansion (not tier 1)
            near = [h for h in lists.get('vector:entity', []) if h.score >= knobs().seed_similarity][:2] + lists.get('bm25:entity', [])[:2]
            for hit in near:
                refs.setdefault(hit.entity_refs[0], hit.resource['name'])
        return Seeds(list(refs), list(named), list(dict.fromkeys(refs.values())))

    def _scored_entities(self, query: str, where: ReadFilter) -> list[Hit]:
        return [self._scored(r, float(r.bm25 or 0.0)) for r in self.search.text('entity', query_terms(query), 8, where)]


PASSAGE_LISTS = ('vector:memory_chunk', 'bm25:memory_chunk')


def best_passages(lists: dict[str, list[Hit]]) -> list[Hit]:
    """The ``neighbour_from`` passages fusion ranks first. Only the passage lists hold passages and a passage's fused
    score depends on them alone, so they are known before the graph is read (fused on copies: fusion scores hits)."""
    passages = {name: [replace(h, lists={}) for h in lists[name]] for name in PASSAGE_LISTS if name in lists}
    return [h for h in fuse(passages) if h.position is not None][: knobs().neighbour_from]


def adjacent(best: Sequence[Hit], found: Sequence[Hit]) -> dict[str, list[Hit]]:
    """Passage id → the passages of its turn's neighbours (same session, seq ± 1)."""
    return {
        hit.id: [n for n in found if n.position and n.position[0] == hit.position[0] and abs(n.position[1] - hit.position[1]) == 1]
        for hit in best
        if hit.position is not None
    }


def key_parts(query: str) -> set[str]:
    """The attribute key parts tier 1 matches: those sharing a stem with a content word of the query ("my plan?" →
    plan, "which editor does Ana use?" → editor, so ``preferred_editor``). A part's stem drops one trailing "s", so
    each stem is matched by itself and by itself plus "s"."""
    stems = {_stem(w) for w in words(query) if w not in STOP_WORDS}
    return {part for stem in stems for part in (stem, f'{stem}s') if _stem(part) == stem}


def with_neighbours(pool: list[Hit], adjacent: dict[str, list[Hit]]) -> list[Hit]:
    """Evidence often spans turns (a question and its answer): each adjacent turn of a top passage gains
    ``neighbour_share`` of that passage's score (joining the pool if absent), then the pool is re-sorted."""
    if not adjacent:
        return pool
    merged = {h.id: h for h in pool}
    base = {h.id: h.score for h in pool}
    for source_id, neighbours in adjacent.items():
        for n in neighbours:
            kept = merged.setdefault(n.id, n)
            kept.score += base[source_id] * knobs().neighbour_share
            kept.lists.setdefault('adjacent', 1)
    return sorted(merged.values(), key=lambda h: (-h.score, h.id))[: knobs().pool]


def asks_when(query: str) -> bool:
    return bool(_ASKS_WHEN.search(query.lower()))


def is_dated(text: str) -> bool:
    return bool(_DATED.search(text.lower()))


def reranked(pool: list[Hit], query: str) -> list[Hit]:
    """Hybrid's last step, over the fused pool with its neighbours: for a question about time, a passage that says
    when (a time expression in its turn) scores ``dated_passage_weight`` times as much, since "When did X …?" is
    answered by the turn that dates X, not by every turn about X; then a fact adds ``source_credit`` of its score to
    the passage it was extracted from, when that passage is in the pool: both are evidence for the same turn."""
    tuned = knobs()
    if asks_when(query):
        for hit in pool:
            if hit.table == 'memory_chunk' and is_dated(hit.text):
                hit.score *= tuned.dated_passage_weight
    said: dict[str, Hit] = {}  # turn -> its best-ranked passage (a long turn has several)
    for hit in pool:
        if hit.table == 'memory_chunk' and hit.turn:
            said.setdefault(hit.turn, hit)
    for hit in pool:
        passage = said.get(hit.turn) if hit.table != 'memory_chunk' and hit.turn else None
        if passage is not None:
            passage.score += hit.score * tuned.source_credit
    return sorted(pool, key=lambda h: (-h.score, h.id))


def fact_refs(hits: Sequence[Hit]) -> list[tuple[str, Any]]:
    """(table, id) of the facts among ``hits``: what reinforcement multiplies."""
    return [h.record for h in hits if h.source in FACT_SOURCES]
