"""The response cache on real paraphrases and near misses, and first-person answers kept to their principal.

Default configuration (threshold 0.92), the local MiniLM model, the extractive composer (no LLM configured),
through the /chat handler on the real engine. The facts come from first-person turns extracted by the worker.
"""

from __future__ import annotations

import pytest

from agent_memory.composition import Services
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.trace_reads import TraceReads
from agent_memory.rows.traces import RetrievalTraceRow
from tests.support.chat import SHARED, chat, tell
from tests.support.handlers import Api
from tests.support.principals import make_principal
from tests.support.worker import Worker

# An answer built from no source is never cached (nothing could invalidate it, and "I don't know" must not outlive the
# fact that would answer it), so each question is asked about something memory holds.
SOME_FACT = 'I am on the Pro plan.'
ANSWERS = {
    'when is my next vacation?': 'My next vacation is in June.',
    'what is my phone number?': 'My phone number is 555-0100.',
    'what meetings do I have this week?': 'I have two meetings this week: the standup and the board review.',
    'what is my plan?': SOME_FACT,
}


def similarity(services: Services, a: str, b: str) -> float:
    va, vb = services.embedder.embed([a, b])
    return sum(x * y for x, y in zip(va, vb, strict=True))


def test_the_documented_paraphrases_are_served_from_the_cache(api: Api, worker: Worker, services: Services) -> None:
    # Given an answered question, When each documented paraphrase is asked, Then it is served from the cache
    tell(api, worker, 'I am on the Pro plan.')
    first = chat(api, 'what is my current plan?')
    assert first['cached'] is False and 'Pro' in first['reply']
    for paraphrase in ('which plan am I on?', 'tell me my subscription tier?'):
        assert similarity(services, 'what is my current plan?', paraphrase) < 0.92  # the embedding alone misses them
        served = chat(api, paraphrase)
        assert served['cached'] is True and served['reply'] == first['reply'], paraphrase


@pytest.mark.parametrize(
    ('asked', 'near_miss'),
    [
        ('when is my next vacation?', 'where is my next vacation?'),
        ('what is my phone number?', 'what is his phone number?'),
        ('what meetings do I have this week?', 'what meetings do I have next week?'),  # cosine 0.97
        ('what is my plan?', 'what was my plan?'),
    ],
)
def test_a_near_miss_is_never_served_the_earlier_answer(api: Api, worker: Worker, asked: str, near_miss: str) -> None:
    # Given an answered question, When a near miss (another week, person or thing) is asked, Then it misses, while the
    # same question still hits
    tell(api, worker, ANSWERS[asked])
    assert chat(api, asked)['citations'], 'the answer must be built from memory to be cached'
    assert chat(api, near_miss)['cached'] is False
    assert chat(api, asked)['cached'] is True  # the earlier answer is still there for the same question


def test_a_near_miss_above_the_threshold_is_traced_as_asking_something_else(
    api: Api, worker: Worker, store: MemoryStore, services: Services
) -> None:
    # Given a near miss whose similarity passes the threshold, When it is asked, Then it misses and the trace says it
    # asks something else
    tell(api, worker, ANSWERS['what meetings do I have this week?'])
    assert similarity(services, 'what meetings do I have this week?', 'what meetings do I have next week?') >= 0.92
    chat(api, 'what meetings do I have this week?')
    missed = chat(api, 'what meetings do I have next week?')
    trace = TraceReads(store).get('retrieval_trace', missed['retrievalTraceId'].split(':', 1)[1])
    assert isinstance(trace, RetrievalTraceRow) and trace.tier_entered == 3 and 'ask something else' in trace.tier_reason


def test_a_first_person_answer_is_reused_only_by_its_principal(api: Api, services: Services, worker: Worker) -> None:
    # Given Xavier's answer to a first-person question, When Yann asks the same, Then Yann gets his own answer and
    # Xavier is still served his
    xavier = make_principal(services, api.context_id, 'xavier', SHARED, 'shared')
    yann = make_principal(services, api.context_id, 'yann', SHARED, 'shared')  # the same readable region
    tell(xavier, worker, 'My name is Xavier.')
    tell(yann, worker, 'My name is Yann.')
    first = chat(xavier, 'What is my name?')
    assert first['cached'] is False and 'Xavier' in first['reply']
    answer = chat(yann, 'What is my name?')
    assert answer['cached'] is False and 'Yann' in answer['reply'] and 'Xavier' not in answer['reply']
    again = chat(xavier, 'What is my name?')
    assert again['cached'] is True and again['reply'] == first['reply']


def test_an_answer_citing_the_callers_self_entity_by_name_is_reused_only_by_its_principal(
    api: Api, services: Services, worker: Worker
) -> None:
    # Given an answer citing Xavier's self entity, When another principal asks the same, Then it is not served to them
    xavier = make_principal(services, api.context_id, 'xavier', SHARED, 'shared')  # display name "Xavier"
    yann = make_principal(services, api.context_id, 'yann', SHARED, 'shared')
    tell(xavier, worker, 'I am on the Pro plan.')
    first = chat(xavier, "What is Xavier's plan?")
    assert first['cached'] is False and first['reply'].startswith('From memory: Your plan is Pro')
    answer = chat(yann, "What is Xavier's plan?")
    assert answer['cached'] is False and 'Your plan' not in answer['reply'] and "Xavier's plan is Pro" in answer['reply']


def test_an_answer_about_someone_else_is_still_shared_by_equal_visibility(api: Api, services: Services) -> None:
    # Given an answer about a third person, When another principal with equal visibility asks, Then it is served from
    # the cache
    xavier = make_principal(services, api.context_id, 'xavier', SHARED, 'shared')
    yann = make_principal(services, api.context_id, 'yann', SHARED, 'shared')
    triple = {'entity': {'type': 'person', 'name': 'Alice'}, 'key': 'role', 'value': 'CTO'}
    assert xavier.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple]})[0] == 200
    first = chat(xavier, "What is Alice's role?")
    served = chat(yann, "What is Alice's role?")
    assert served['cached'] is True and served['reply'] == first['reply']
