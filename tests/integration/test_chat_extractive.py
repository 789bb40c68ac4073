"""/chat answers the question, through the handler on the real engine: without an LLM (the extractive composer),
and what an LLM is given. The facts come from first-person turns extracted by the worker (stage 0).
"""

from __future__ import annotations

from typing import Any

from agent_memory.adapters.openai_composer import LlmComposer
from agent_memory.composition import Services
from tests.support.handlers import Api
from tests.support.llm_server import LlmTestServer
from tests.support.worker import Worker


def say(api: Api, worker: Worker, *texts: str) -> None:
    for text in texts:
        code, body, _ = api.call('facts', 'POST', '/facts', {'text': text})
        assert code == 202, body
    worker.drain()


def ask(api: Api, message: str) -> dict[str, Any]:
    code, body, _ = api.call('chat', 'POST', '/chat', {'message': message, 'bypassCache': True})
    assert code == 200, body
    return body


def test_the_users_earlier_questions_are_never_cited_as_evidence(api: Api, worker: Worker) -> None:
    # Given only the user's own earlier question in memory, When the question is asked again, Then nothing is cited; a
    # turn that states a fact is citable
    ask(api, 'what is my current plan?')
    ask(api, 'is my plan the Pro plan?')
    worker.drain()  # both questions are stored as turns (and embedded)
    answer = ask(api, 'which plan am I on?')
    assert answer['citations'] == [] and answer['reply'] == "I don't know: nothing in memory answers that."
    code, _, _ = api.call('facts', 'POST', '/facts', {'text': 'I switched to the Pro plan. Which one are you on?', 'infer': 'none'})
    assert code == 200
    worker.drain()
    answer = ask(api, 'which plan am I on?')  # a turn that also states something is a memory
    assert [c['snippet'] for c in answer['citations']] == ['I switched to the Pro plan. Which one are you on?']


def test_the_fact_that_answers_comes_first_and_alone(api: Api, worker: Worker) -> None:
    # Given several facts about the caller, When it asks its plan, Then the answer starts with the plan fact and cites
    # only it
    say(api, worker, 'I live in Lisbon.', 'I work at Acme.', 'I am on the Pro plan.')
    answer = ask(api, 'which plan am I on?')
    assert answer['reply'].startswith('From memory: Your plan is Pro [S')
    assert [c['snippet'] for c in answer['citations']] == ['Admin plan: Pro']  # not every retrieved line


def test_the_callers_own_facts_read_as_you(api: Api, worker: Worker) -> None:
    # Given facts about the caller, When it asks about them, Then the answer says 'you', not its name
    say(api, worker, 'I am on the Pro plan.', 'I work at Acme.')
    plan = ask(api, 'what is my current plan?')
    assert 'Your plan is Pro' in plan['reply'] and 'Admin' not in plan['reply']
    work = ask(api, 'where do I work?')
    assert 'Your employer is Acme' in work['reply'] and 'Admin' not in work['reply']


def test_someone_elses_facts_keep_their_name(api: Api) -> None:
    # Given a fact about Alice, When the caller asks about it, Then the answer names Alice
    triple = {'entity': {'type': 'person', 'name': 'Alice'}, 'key': 'plan', 'value': 'Basic'}
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple]})[0] == 200
    answer = ask(api, 'which plan is Alice on?')
    assert answer['reply'] == "From memory: Alice's plan is Basic [S1]."


def test_the_llm_is_given_no_earlier_question_and_knows_which_facts_are_the_users(api: Api, worker: Worker, services: Services) -> None:
    # Given an earlier question and the caller's facts, When /chat asks the model, Then the prompt's memory has no
    # earlier question and marks the caller's own facts
    say(api, worker, 'I am on the Pro plan.')
    ask(api, 'what is my current plan?')
    worker.drain()
    server = LlmTestServer(echo_sources=True).start()
    previous = services._composer
    services._composer = LlmComposer(server.base_url, 'test-model', None, 5.0)
    try:
        ask(api, 'which plan am I on?')
    finally:
        services._composer = previous
        server.stop()
    prompt = server.requests[-1].messages[-1]['content']
    memory = prompt.split('<memory>', 1)[1].split('</memory>', 1)[0]
    assert 'what is my current plan?' not in memory
    assert any(line.endswith('about the user) Admin plan: Pro') for line in memory.splitlines())
