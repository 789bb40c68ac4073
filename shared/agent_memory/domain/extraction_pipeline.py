"""From a stored turn to reconciled memory: context window, extractors, one reconcile transaction per turn.

Used by the SQS worker (``process_job``) and synchronously by ``infer: preview`` (``preview_turn``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast, get_args

from aws_lambda_powertools.metrics import MetricUnit

from agent_memory.clock import new_id, utcnow
from agent_memory.domain.chunks import chunk_id
from agent_memory.domain.commit import commit
from agent_memory.domain.context_config import ContextConfig
from agent_memory.domain.entity_keys import Speaker
from agent_memory.domain.extraction_vocabulary import JobVocabulary, Vocabulary
from agent_memory.domain.ports import MemoryWrites
from agent_memory.domain.reconcile import Diff, Reconciler, Source, without_forged_self_refs
from agent_memory.domain.turns import evidence_text, passage_texts
from agent_memory.embeddings import Embedder
from agent_memory.errors import AlreadyApplied, run_with_retry
from agent_memory.extraction.errors import LlmFailure, ProviderOutputInvalid, ProviderRetryable
from agent_memory.extraction.llm import LlmExtraction
from agent_memory.extraction.model import (
    EntityRef,
    ExtractedUncertainty,
    Extraction,
    ExtractionContext,
    PriorTurn,
    UncertaintyKind,
)
from agent_memory.extraction.speaker import bind_first_person
from agent_memory.observability import logger, metrics
from agent_memory.rows.control import PrincipalRow
from agent_memory.rows.conversation import TurnRow
from agent_memory.rows.directives import UncertaintyRow
from agent_memory.rows.refs import entity_key_of
from agent_memory.vocabulary import MemoryCategory
from agent_memory.write_ops import EmbedChunk, MarkTurnExtracted, WritePlan

CONTEXT_WINDOW_TURNS = 6
OPEN_UNCERTAINTY_LIMIT = 20

Stage0 = Callable[[str, ExtractionContext], Extraction]


class LlmStage(Protocol):
    """What the pipeline needs from the LLM stage (``extraction.llm.LlmExtractor`` provides it)."""

    def extract(self, text: str, ctx: ExtractionContext, stage0: Extraction, model: str | None = None) -> LlmExtraction: ...


@dataclass(frozen=True)
class StageOutcome:
    """How a turn was extracted: ``mode`` is ``stage0`` or the structured-output mode of the LLM result;
    ``llm_error`` the classified reason the LLM stage failed (stage 0 was then kept)."""

    mode: str
    llm_error: LlmFailure | None = None


@dataclass(frozen=True)
class Extractors:
    stage0: Stage0
    llm: LlmStage | None = None

    def run(self, text: str, ctx: ExtractionContext, model: str | None, final_delivery: bool = False) -> tuple[Extraction, StageOutcome]:
        """Stage 0 always; the LLM stage when configured. Whatever the LLM stage fails with keeps stage 0 and reports
        why, except a transient provider error before the final delivery, which propagates so SQS retries the message.

        A valid LLM result (which saw stage 0 as a hint) wins wherever it speaks; stage 0's instructions and
        uncertainties, and its facts at addresses the model left empty, are kept: what the rules caught is never
        silently dropped (a tiny model's valid but empty reply must not cost the turn its facts). First person is
        bound to the message's named speaker, if any, after every stage.
        """
        extraction, outcome = self._run(text, ctx, model, final_delivery)
        return bind_first_person(extraction, ctx.speaker), outcome

    def _run(self, text: str, ctx: ExtractionContext, model: str | None, final_delivery: bool) -> tuple[Extraction, StageOutcome]:
        base = without_forged_self_refs(self.stage0(text, ctx))
        if self.llm is None:
            return base, StageOutcome('stage0')
        try:
            result = self.llm.extract(text, ctx, base, model)
        except ProviderOutputInvalid as exc:
            return base, StageOutcome('stage0', exc.reason)
        except ProviderRetryable as exc:
            if not final_delivery:
                raise
            return base, StageOutcome('stage0', exc.reason)
        model_result = without_forged_self_refs(result.extraction)
        return model_result.merged(base.not_covered_by(model_result)), StageOutcome(result.mode)


@dataclass(frozen=True)
class TurnInput:
    """A turn as the pipeline sees it (stored, or about to be for preview)."""

    turn_id: str | None
    session_key: str | None  # the session's stored key
    seq: int
    role: str
    content: str
    observed_at: Any
    scope_sets: list[list[str]]
    principal: str
    category_override: MemoryCategory | None = None
    speaker: str | None = None  # the message's ``name``
    origin: str | None = None  # where the turn came from (domain/turns.py): a /chat message is read for its statements
    acting_principal: str | None = None  # the manager who wrote it on the principal's behalf

    @property
    def said(self) -> str:
        """What extraction reads: the statements of a /chat message, the whole of any other turn."""
        return evidence_text(self.content, self.origin)

    @classmethod
    def from_row(cls, row: TurnRow) -> TurnInput:
        return cls(
            row.id,
            row.session_key or None,
            row.seq,
            row.role,
            row.content,
            row.observed_at,
            row.scope_sets,
            row.principal,
            cast('MemoryCategory | None', row.memory_category),  # stored only after validation
            row.speaker,
            row.origin,
            row.acting_principal,
        )


def extraction_context(
    store: MemoryWrites, turn: TurnInput, speaker: Speaker, read_patterns: list[str], vocabulary: Vocabulary
) -> ExtractionContext:
    recent, open_rows = store.turns().context_window(
        turn.session_key, turn.seq, CONTEXT_WINDOW_TURNS, read_patterns, OPEN_UNCERTAINTY_LIMIT
    )
    return ExtractionContext(
        role=turn.role,
        observed_at=turn.observed_at,
        speaker_name=speaker.display_name,
        speaker=turn.speaker,
        known_entities=vocabulary.entities,
        attribute_keys=vocabulary.keys,
        relation_labels=vocabulary.labels,
        recent_turns=tuple(  # a reply /chat generated is never read as what was said
            PriorTurn(role=t.role, content=t.content, observed_at=t.observed_at, speaker=t.speaker)
            for t in recent
            if t.origin != 'chat_reply'
        ),
        open_uncertainties=tuple(_open_uncertainty(row, speaker) for row in open_rows),
    )


def _open_uncertainty(row: UncertaintyRow, speaker: Speaker) -> ExtractedUncertainty:
    entity = None
    if row.entity_key is not None:
        key = list(row.entity_key)
        entity = EntityRef.me() if key == list(speaker.key) else EntityRef(type=key[0], name=key[1])
    kind = row.kind if row.kind in get_args(UncertaintyKind) else 'other'
    return ExtractedUncertainty(about=row.about, reason=row.reason, kind=kind, entity=entity, key=row.key)


def plan_turn(
    store: MemoryWrites,
    turn: TurnInput,
    extraction: Extraction,
    speaker: Speaker,
    config: ContextConfig,
    session_id: str | None,
    outcome: StageOutcome,
    reader: list[str],
) -> tuple[WritePlan, Diff]:
    """Reconcile one turn's extraction into a plan that also marks the turn done (applied by the caller). ``reader`` is
    the writer's read region: the diff names no value outside it."""
    started = time.perf_counter()
    now = utcnow()
    plan = WritePlan(now=now, session_id=session_id)
    diff = Diff(turn_id=turn.turn_id)
    source = Source('turn', f'turn:{turn.turn_id}', session_id, turn.principal, turn.turn_id, turn.acting_principal)
    reconciler = Reconciler(
        store,
        plan,
        diff,
        source,
        turn.scope_sets,
        default_category='context',
        floor=config.reconciliation.confidence_floor,
        known_at=turn.observed_at,
        speaker=speaker,
        reader=reader,
        category_override=turn.category_override,
    )
    reconciler.run(extraction)
    trace_input = {'infer': 'full', 'extraction': extraction.model_dump(mode='json')}
    plan.add(reconciler.decision_trace(new_id(), trace_input, turn.turn_id, (time.perf_counter() - started) * 1000))
    if turn.turn_id:
        plan.add(MarkTurnExtracted(turn.turn_id, json.dumps(diff.as_json()), outcome.mode, outcome.llm_error))
        plan.add(*(EmbedChunk(chunk_id(turn.turn_id, i), text) for i, text in enumerate(passage_texts(turn.content, turn.origin))))
    return plan, diff


@dataclass(frozen=True)
class TurnResult:
    status: str
    diff: dict[str, Any] | None = None


class JobReads:
    """What the turns of one job share, read once: the turns (their attempts started in the same round trip), their
    writers, and the vocabulary of each read region, kept current with what each committed turn wrote."""

    def __init__(self, store: MemoryWrites, turn_ids: tuple[str, ...]) -> None:
        self.store = store
        self.turns = store.turns().start_job(turn_ids)
        self._principals: dict[str, PrincipalRow | None] = {}
        self._vocabularies: dict[tuple[str, ...], JobVocabulary] = {}

    def principal(self, principal_id: str) -> PrincipalRow | None:
        if principal_id not in self._principals:
            self._principals[principal_id] = self.store.get_principal(principal_id)
        return self._principals[principal_id]

    def vocabulary(self, patterns: list[str]) -> JobVocabulary:
        key = tuple(patterns)
        if key not in self._vocabularies:
            self._vocabularies[key] = JobVocabulary(self.store, key)
        return self._vocabularies[key]


def process_turn(
    store: MemoryWrites,
    extractors: Extractors,
    embedder: Embedder,
    config: ContextConfig,
    turn_id: str,
    final_delivery: bool = True,
    job: JobReads | None = None,
) -> TurnResult:
    """Extract and reconcile one stored turn; a turn already done is left alone (idempotent per turn).

    ``final_delivery`` False lets a transient provider error propagate (the message is retried); True (the last
    SQS delivery, or a caller that cannot retry) reconciles stage 0 instead. ``job`` holds what the job's turns
    share (read here for a job of this one turn)."""
    job = job or JobReads(store, (turn_id,))
    row = job.turns.get(turn_id)
    if row is None:
        logger.warning('extraction job names an unknown turn', extra={'turn': turn_id})
        return TurnResult('missing')
    if row.extraction_status == 'done':
        return TurnResult('done')
    turn = TurnInput.from_row(row)
    principal = job.principal(turn.principal)
    speaker = Speaker(turn.principal, principal.display_name if principal else turn.principal)
    stored_region = row.read_region  # the writer's effective grants (key and delegation included)
    fallback = principal.grants.get('memory:read', []) if principal else []
    read_patterns = list(stored_region if stored_region is not None else fallback)
    vocabulary = job.vocabulary(read_patterns)
    ctx = extraction_context(store, turn, speaker, read_patterns, vocabulary.current())
    extraction, outcome = extractors.run(turn.said, ctx, config.models.extraction, final_delivery)
    session_id = turn.session_key

    def attempt() -> tuple[WritePlan, Diff]:
        plan, diff = plan_turn(store, turn, extraction, speaker, config, session_id, outcome, read_patterns)
        commit(store, embedder, plan)
        return plan, diff

    try:
        plan, diff = run_with_retry(attempt)
    except AlreadyApplied:
        vocabulary.forget()  # another delivery wrote this turn: what it wrote is not in our plan
        return TurnResult('done')  # a concurrent delivery of the same job finished first
    vocabulary.note(plan, {entity_key_of(e['id']) for e in diff.entities if e['isNew']})
    metrics.add_metric(name='ExtractionDone', unit=MetricUnit.Count, value=1)
    if outcome.llm_error:
        metrics.add_metric(name='ExtractionLlmFallback', unit=MetricUnit.Count, value=1)
    return TurnResult('done', diff.as_json())


def preview_turn(
    store: MemoryWrites, extractors: Extractors, config: ContextConfig, turn: TurnInput, speaker: Speaker, read_patterns: list[str]
) -> dict[str, Any]:
    """``infer: preview``: the diff a full extraction would produce now, with nothing persisted."""
    vocabulary = JobVocabulary(store, tuple(read_patterns)).current()
    ctx = extraction_context(store, turn, speaker, read_patterns, vocabulary)
    extraction, outcome = extractors.run(turn.content, ctx, config.models.extraction, final_delivery=True)  # nothing retries a preview
    _, diff = plan_turn(store, turn, extraction, speaker, config, None, outcome, read_patterns)
    return diff.as_json()
