"""Small pure helpers of the write path."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from pydantic import ValidationError

from agent_memory.clock import iso, new_id, parse_rfc3339
from agent_memory.db.records import entity_rid, ref, rid
from agent_memory.domain.chunks import split_text
from agent_memory.domain.idempotency import body_hash
from agent_memory.models import FactsRequest


def test_split_text_keeps_every_word_and_bounds_chunks() -> None:
    # Given a long text, When it is split, Then no chunk exceeds the size and every word is kept in order
    text = ' '.join(f'w{i}' for i in range(3000))
    chunks = split_text(text, size=500)
    assert all(len(c) <= 500 for c in chunks)
    assert ' '.join(chunks).split() == text.split()
    assert split_text('short') == ['short']


def test_split_text_cuts_unbroken_text_hard() -> None:
    # Given 1,200 characters with no break, When split at 500, Then the chunks are 500, 500 and 200
    assert [len(c) for c in split_text('x' * 1200, size=500)] == [500, 500, 200]


def test_body_hash_ignores_key_order_but_not_content() -> None:
    # Given two bodies, When hashed, Then key order does not matter but content, method and path do
    assert body_hash('POST', '/p', {'a': 1, 'b': [1, 2]}) == body_hash('POST', '/p', {'b': [1, 2], 'a': 1})
    assert body_hash('POST', '/p', {'a': 1}) != body_hash('POST', '/p', {'a': 2})
    assert body_hash('POST', '/p', {'a': 1}) != body_hash('POST', '/q', {'a': 1})


def test_ids_are_time_ordered_and_unique() -> None:
    # Given the clock before and after, When 1,000 ids are made one after another
    before_ms = time.time_ns() // 1_000_000
    ids = [new_id() for _ in range(1000)]
    after_ms = time.time_ns() // 1_000_000
    # Then they are unique, 22 characters, and their millisecond prefixes never go back in time
    assert len(set(ids)) == 1000
    assert all(len(i) == 22 for i in ids)
    stamps = [int(i[:12], 16) for i in ids]
    assert stamps == sorted(stamps)
    assert before_ms <= stamps[0] and stamps[-1] <= after_ms
    # and ids made in different milliseconds sort in the order they were made
    assert all(a < b for a, b, sa, sb in zip(ids, ids[1:], stamps, stamps[1:], strict=False) if sa < sb)


def test_timestamps_round_trip_in_utc() -> None:
    # Given an offset timestamp, When parsed and rendered, Then it is the same instant in UTC with a Z
    parsed = parse_rfc3339('2026-03-01T10:00:00+02:00')
    assert parsed == dt.datetime(2026, 3, 1, 8, tzinfo=dt.UTC)
    assert iso(parsed) == '2026-03-01T08:00:00Z'
    with pytest.raises(ValueError):
        parse_rfc3339('2026-03-01T10:00:00')


def test_record_refs_render_for_clients() -> None:
    # Given record ids, When rendered for clients, Then they read table:key (None stays None)
    assert ref(entity_rid('person', 'alice smith')) == 'entity:person/alice smith'
    assert ref(rid('attribute', 'abc')) == 'attribute:abc'
    assert ref(None) is None


def test_facts_request_accepts_camel_case_and_scope_alias() -> None:
    # Given a camelCase body with the scope alias, When validated, Then the fields are read
    request = FactsRequest.model_validate({'infer': 'none', 'text': 'hi', 'sessionId': 's-1', 'scope': 'org/a',
                                           'observedAt': '2026-01-01T00:00:00Z', 'memoryCategory': 'context'})  # fmt: skip
    assert (request.session_id, request.scopes, request.memory_category) == ('s-1', 'org/a', 'context')
    assert request.observed_at == dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    'body',
    [
        {'infer': 'none'},
        {'infer': 'triples', 'triples': []},
        {'infer': 'none', 'text': '   '},
        {'infer': 'none', 'text': 'x', 'labels': ['novalue']},
        {'infer': 'triples', 'triples': [{'entity': {'type': 'person', 'name': ' '}, 'key': 'k', 'value': 'v'}]},
    ],
)
def test_facts_request_rejects(body: dict[str, object]) -> None:
    # Given an invalid facts body, When validated, Then it is refused
    with pytest.raises(ValidationError):
        FactsRequest.model_validate(body)
