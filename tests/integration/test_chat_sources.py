"""What /chat gives its composer: the best evidence retrieval found, not the user's own earlier questions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.chat import chat, remember
from tests.support.handlers import Api
from tests.support.llm_server import LlmTestServer
from tests.support.worker import Worker

WORKLOAD = json.loads((Path(__file__).parents[2] / 'bench' / 'data' / 'paraphrase_workload.json').read_text())


@pytest.mark.usefixtures('llm')
def test_earlier_questions_do_not_crowd_the_facts_out_of_the_sources(api: Api, llm: LlmTestServer, worker: Worker) -> None:
    # Given the cache benchmark's facts about a person and 21 earlier first-person questions ("what is my …?"), each
    # stored as the user turn of its own session
    facts = WORKLOAD['seed_facts']
    remember(api, *({'entity': f['entity'], 'key': f['key'], 'value': f['value'], 'memory_category': f['category']} for f in facts))
    asked = [intent['paraphrases'][0] for intent in WORKLOAD['intents']]
    for question in asked[:21]:
        chat(api, question)
    worker.drain()  # the worker embeds the queued questions' chunks
    # When one more such question is asked
    body = chat(api, 'when is my birthday?')
    # Then its fact reaches the model and is cited: the earlier questions that rank above it are never evidence, and
    # they no longer take the places it needs
    snippets = [c['snippet'] for c in body['citations']]
    assert 'user birthday: September 22' in snippets, snippets
    prompt = llm.requests[-1].body['messages'][-1]['content']
    assert 'September 22' in prompt and not any(question in prompt for question in asked[:21])
