"""A model reply is built from every source it was given, cited or not (CONTRACT §8), and the cache honours that.

A copy served from the cache is stored no more visible than all of them (issue 12, hole 6 via tier 2); a reply that
read the caller's own facts is reused by that principal only (hole 7); a change to any of them invalidates it.
"""

from __future__ import annotations

from agent_memory.composition import Services
from tests.support.chat import SHARED, chat, tell
from tests.support.handlers import Api
from tests.support.llm_server import LlmTestServer
from tests.support.office import HR, Office, passages
from tests.support.principals import make_principal
from tests.support.worker import Worker


def test_a_cached_model_reply_counts_the_uncited_sources_the_original_read(
    services: Services,
    context_id: str,
    office: Office,  # noqa: F811
    llm: LlmTestServer,  # noqa: F811
) -> None:
    # Given a cached model reply that read HR's salary fact uncited, When an asker who cannot write to HR is served it,
    # Then its reply is not stored in a wider scope
    reads = ['shared/*', HR]
    writer = make_principal(services, context_id, 'hr-writer', {'memory:read': reads, 'memory:write': ['shared/*', HR]}, 'shared')
    asker = make_principal(services, context_id, 'hr-asker', {'memory:read': reads, 'memory:write': ['shared/*']}, 'shared')
    llm.reply_text('Dana is paid 120k a year.')  # read from the HR source, cited nowhere
    ask = {'message': "What is Dana's salary?"}
    code, first, _ = writer.call('chat', 'POST', '/chat', ask)
    assert code == 200 and first['cached'] is False and first['citations'] == [], first
    code, second, _ = asker.call('chat', 'POST', '/chat', ask)
    assert code == 200 and second['cached'] is True, second
    assert second['memoryUpdates']['replyStored'] is False  # HR is outside the asker's write region
    assert not [p for p in passages(office.reader, 'Dana is paid 120k a year') if '120k' in p]


def test_a_model_reply_that_read_the_callers_own_facts_uncited_is_reused_only_by_its_principal(
    services: Services,
    api: Api,
    worker: Worker,
    llm: LlmTestServer,  # noqa: F811
) -> None:
    # Given a model reply that read the caller's own facts uncited, When another principal asks the same, Then it is
    # answered fresh
    xavier = make_principal(services, api.context_id, 'xavier', SHARED, 'shared')
    yann = make_principal(services, api.context_id, 'yann', SHARED, 'shared')  # the same readable region
    tell(xavier, worker, 'I am on the Pro plan.')
    llm.reply_text('Your plan is Pro.')  # the prompt marks the caller's own facts; the model cites nothing
    first = chat(xavier, 'Which plan is the account on?')
    assert first['cached'] is False and first['citations'] == [] and 'plan: Pro' in llm.requests[-1].message('user')
    llm.reply_text('I do not know your plan.')
    answer = chat(yann, 'Which plan is the account on?')
    assert answer['cached'] is False and answer['reply'] == 'I do not know your plan.'


def test_a_cached_model_reply_is_invalidated_by_a_change_to_a_source_it_read_uncited(
    api: Api,
    llm: LlmTestServer,  # noqa: F811
) -> None:
    # Given a cached model reply that read the salary uncited, When the salary changes, Then the next ask is fresh
    salary = {'entity': {'type': 'person', 'name': 'Dana'}, 'key': 'salary', 'value': '120k'}
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [salary]})[0] == 200
    llm.reply_text('Dana is paid 120k a year.')  # cites nothing
    first = chat(api, "What is Dana's salary?")
    assert first['cached'] is False and first['citations'] == []
    assert chat(api, "What is Dana's salary?")['cached'] is True  # unchanged sources: reused
    raised = {**salary, 'value': '130k'}
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [raised]})[0] == 200
    llm.reply_text('Dana is paid 130k a year.')
    assert chat(api, "What is Dana's salary?")['reply'] == 'Dana is paid 130k a year.'
