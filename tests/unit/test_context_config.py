"""Per-context configuration: defaults, deep merge and validation (CONTRACT §8, §9, §13)."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.domain.context_config import ContextConfig, deep_merge, effective_config
from agent_memory.errors import BadRequest


def test_no_stored_config_gives_the_contract_defaults() -> None:
    # Given a context with no stored config (None) and one with an empty override
    # When the effective config is resolved
    # Then every documented default applies
    for stored in (None, {}):
        config = effective_config(stored)
        assert config.response_cache.enabled is True
        assert config.response_cache.similarity_threshold == 0.92
        assert config.response_cache.freshness_window_seconds == 3600
        assert config.trace_retention.decision_trace_days is None
        assert config.trace_retention.retrieval_trace_days == 90
        assert config.trace_retention.response_trace_days == 90
        assert config.reconciliation.confidence_floor == 0.7
        assert config.lifecycle.context_ttl_days == 7
        assert config.models.extraction is None
        assert config.models.synthesis is None
        assert config.models.embedding is None


def test_defaults_dump_has_exactly_the_documented_sections() -> None:
    # Given the default config
    # When it is dumped (what GET /contexts/{id} returns)
    dumped = ContextConfig().model_dump()
    # Then it has the five sections of §13 plus the per-context rate limit (tenancy issue), nothing else
    assert set(dumped) == {'response_cache', 'trace_retention', 'reconciliation', 'lifecycle', 'models', 'rate_limit'}
    assert dumped['rate_limit'] == {'enabled': True, 'requests_per_minute': 1200, 'burst': 200}
    assert dumped['trace_retention'] == {'decision_trace_days': None, 'retrieval_trace_days': 90, 'response_trace_days': 90}


def test_partial_override_deep_merges_over_defaults() -> None:
    # Given an override that touches one field in two sections
    stored = {'response_cache': {'similarity_threshold': 0.8}, 'trace_retention': {'decision_trace_days': 30}}
    # When resolved
    config = effective_config(stored)
    # Then the touched fields change and their siblings keep their defaults
    assert config.response_cache.similarity_threshold == 0.8
    assert config.response_cache.enabled is True
    assert config.response_cache.freshness_window_seconds == 3600
    assert config.trace_retention.decision_trace_days == 30
    assert config.trace_retention.retrieval_trace_days == 90
    assert config.trace_retention.response_trace_days == 90
    assert config.reconciliation.confidence_floor == 0.7


def test_deep_merge_is_recursive_and_does_not_mutate_its_inputs() -> None:
    # Given a nested base and a patch
    base = {'a': {'x': 1, 'y': {'deep': 1, 'keep': True}}, 'b': [1, 2]}
    patch = {'a': {'y': {'deep': 2}}, 'b': [3], 'c': {'new': 1}}
    # When merged
    merged = deep_merge(base, patch)
    # Then nested dicts merge key by key, non-dicts are replaced, new keys are added
    assert merged == {'a': {'x': 1, 'y': {'deep': 2, 'keep': True}}, 'b': [3], 'c': {'new': 1}}
    # And neither input changed, and the result shares no mutable parts with the patch
    assert base == {'a': {'x': 1, 'y': {'deep': 1, 'keep': True}}, 'b': [1, 2]}
    assert patch == {'a': {'y': {'deep': 2}}, 'b': [3], 'c': {'new': 1}}
    merged['c']['new'] = 99
    assert patch['c']['new'] == 1


def test_json_integers_are_accepted_for_float_fields() -> None:
    # Given JSON integers where floats are expected (a client sends 1, not 1.0)
    # When the effective config is built
    config = effective_config({'response_cache': {'similarity_threshold': 1}, 'reconciliation': {'confidence_floor': 0},
                               'lifecycle': {'context_ttl_days': 3}})  # fmt: skip
    # Then they are accepted as the equal float
    assert config.response_cache.similarity_threshold == 1.0
    assert config.reconciliation.confidence_floor == 0.0
    assert config.lifecycle.context_ttl_days == 3.0


def test_boundary_values_that_are_valid() -> None:
    # Given values exactly on the allowed edges
    # When the effective config is built
    config = effective_config({
        'response_cache': {'similarity_threshold': 1.0, 'freshness_window_seconds': 0, 'enabled': False},
        'trace_retention': {'retrieval_trace_days': 1, 'response_trace_days': None, 'decision_trace_days': 1},
    })  # fmt: skip
    # Then they are accepted unchanged
    assert config.response_cache.similarity_threshold == 1.0
    assert config.response_cache.freshness_window_seconds == 0
    assert config.response_cache.enabled is False
    assert config.trace_retention.retrieval_trace_days == 1
    assert config.trace_retention.response_trace_days is None
    assert config.trace_retention.decision_trace_days == 1


@pytest.mark.parametrize(
    'stored',
    [
        pytest.param({'response_cache': {'similarity_threshold': 0}}, id='threshold-zero'),
        pytest.param({'response_cache': {'similarity_threshold': 0.0}}, id='threshold-zero-float'),
        pytest.param({'response_cache': {'similarity_threshold': 1.5}}, id='threshold-above-one'),
        pytest.param({'response_cache': {'similarity_threshold': -0.1}}, id='threshold-negative'),
        pytest.param({'response_cache': {'freshness_window_seconds': -1}}, id='negative-window'),
        pytest.param({'response_cache': {'freshness_window_seconds': 'abc'}}, id='window-wrong-type'),
        pytest.param({'response_cache': {'freshness_window_seconds': 1.5}}, id='window-fractional'),
        pytest.param({'response_cache': {'enabled': 'yes'}}, id='enabled-not-bool'),
        pytest.param({'response_cache': {'similarity_threshold': 'abc'}}, id='threshold-wrong-type'),
        pytest.param({'trace_retention': {'decision_trace_days': 0}}, id='decision-retention-zero'),
        pytest.param({'trace_retention': {'retrieval_trace_days': 0}}, id='retrieval-retention-zero'),
        pytest.param({'trace_retention': {'response_trace_days': -5}}, id='response-retention-negative'),
        pytest.param({'trace_retention': {'retrieval_trace_days': 'abc'}}, id='retention-wrong-type'),
        pytest.param({'reconciliation': {'confidence_floor': 1.5}}, id='floor-above-one'),
        pytest.param({'lifecycle': {'context_ttl_days': 0}}, id='ttl-zero'),
        pytest.param({'response_cache': {'unknown_field': 1}}, id='unknown-nested-field'),
        pytest.param({'unknown_section': {}}, id='unknown-section'),
        pytest.param({'response_cache': 5}, id='section-not-an-object'),
        pytest.param({'models': {'extraction': 42}}, id='model-name-not-string'),
    ],
)
def test_invalid_values_are_rejected_with_bad_request(stored: dict[str, Any]) -> None:
    # Given an override with one invalid value
    # When resolved
    # Then a 400 BadRequest names the problem
    with pytest.raises(BadRequest) as caught:
        effective_config(stored)
    assert caught.value.status == 400
    assert caught.value.detail.startswith('invalid config:')


def test_error_message_names_the_offending_field() -> None:
    # Given a bad threshold
    # When resolved
    with pytest.raises(BadRequest) as caught:
        effective_config({'response_cache': {'similarity_threshold': 1.5}})
    # Then the message points at the dotted path of the field
    assert 'response_cache.similarity_threshold' in caught.value.detail
