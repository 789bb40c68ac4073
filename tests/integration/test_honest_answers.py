"""Answers a user can trust (CONTRACT §7.1): without an LLM a reply states a value only when a current fact or passage
answers what was asked, else it says memory holds nothing; markers count from [S1]; /chat follows the caller's active
instructions (a model is given them apart from the memory data; the extractive reply applies bullets and brevity and
lists what it cannot apply). Through the handlers on the real engine, with stage 0 extracting the turns."""

from __future__ import annotations

import json
import re
from typing import Any

from agent_memory.adapters.openai_composer import LlmComposer
from agent_memory.composition import Services
from tests.support.handlers import Api
from tests.support.llm_server import LlmTestServer
from tests.support.worker import Worker

DONT_KNOW = "I don't know: nothing in memory answers that."
MAYA = [
    "Hi! I'm Maya Okafor, I'm a pediatric nurse at St. Mary's Hospital in Leeds.",
    "We have a golden retriever, Biscuit, he's 4.",
    "My sister Ada lives in Toronto, she's an architect.",
    'My brother Tom lives in Dublin.',
    'Actually, I made a mistake earlier: I work at Leeds General Infirmary, not St. Mary’s.',
]


def say(api: Api, worker: Worker, *texts: str) -> None:
    for text in texts:
        code, body, _ = api.call('facts', 'POST', '/facts', {'text': text})
        assert code == 202, body
        worker.drain()


def ask(api: Api, message: str) -> dict[str, Any]:
    code, body, _ = api.call('chat', 'POST', '/chat', {'message': message, 'bypassCache': True})
    assert code == 200, body
    return body


def test_the_reported_questions_are_answered_or_refused_honestly(api: Api, worker: Worker) -> None:
    # Given Maya's turns (a dog, a sister, a brother, a corrected employer) and a curated fact about Alice
    say(api, worker, *MAYA)
    triple = {'entity': {'type': 'person', 'name': 'Alice'}, 'key': 'plan', 'value': 'Pro'}
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple]})[0] == 200
    # Then the dog's name is the dog's, not the asker's own name
    dog = ask(api, 'What is the name of my dog?')
    assert 'Biscuit' in dog['reply'] and 'Maya' not in dog['reply'] and dog['reply'].startswith('From memory:')
    # the sister's city is the sister's; the corrected employer is the current one, never the one corrected away
    assert 'Toronto' in ask(api, 'Where does my sister live?')['reply']
    work = ask(api, 'Where does Maya work?')['reply']
    assert 'Leeds General Infirmary' in work and "St. Mary's" not in work
    # and what memory does not hold is refused: another person's plan, a pet that does not exist, a fact about the
    # brother that was never said; the closest notes may follow, as notes that do not answer, each cited
    for question in ('What plan is Bob on?', 'What is my cat called?', 'Where does my brother work?'):
        refused = ask(api, question)
        assert refused['reply'].startswith(DONT_KNOW), question
        notes = refused['reply'].removeprefix(DONT_KNOW)
        assert notes == '' or notes.startswith(' Closest notes, which do not answer it: '), notes
        assert len(refused['citations']) == len(re.findall(r'\[S\d+\]', notes)) <= 3
        assert all(c['kind'] == 'memory_chunk' for c in refused['citations'])
    brother = ask(api, 'Where does my brother work?')
    assert 'My brother Tom lives in Dublin' in brother['reply']  # the note closest to what was asked


def test_markers_count_from_s1_in_the_order_of_the_reply(api: Api, worker: Worker) -> None:
    say(api, worker, 'I speak German and French.')
    body = ask(api, 'Which languages do I speak?')
    markers = re.findall(r'\[S\d+\]', body['reply'])
    assert markers == [f'[S{n}]' for n in range(1, len(markers) + 1)] and len(markers) == 2
    assert [c['marker'] for c in body['citations']] == markers


def test_the_extractive_reply_follows_the_instructions_it_can_and_lists_the_others(api: Api, worker: Worker) -> None:
    # Given two languages in memory and three instructions, When asked, Then the reply is bullet points, and the French
    # instruction is listed as not applied
    say(api, worker, 'I speak German and French.', 'Always answer in bullet points.', 'Always answer in French.')
    reply = ask(api, 'Which languages do I speak?')['reply']
    lines = reply.splitlines()
    assert lines[0] == 'From memory:' and sorted(lines[1:3]) in (
        ['- You speak French [S1].', '- You speak German [S2].'],
        ['- You speak French [S2].', '- You speak German [S1].'],
    )
    assert reply.endswith('(Not applied without a language model: "Always answer in French".)')
    # When a later instruction reverses the bullets and another asks for brevity, Then the newest wins and one line shows
    say(api, worker, 'Stop using bullet points.', 'Keep your answers short.')
    reply = ask(api, 'Which languages do I speak?')['reply']
    assert re.fullmatch(r'From memory: You speak (?:German|French) \[S1\]\.\n\(Not applied.*', reply, re.S), reply


def test_the_model_is_given_the_instructions_apart_from_the_memory(api: Api, worker: Worker, services: Services) -> None:
    say(api, worker, 'I speak German.', 'Always answer in bullet points.', 'Stop using bullet points.')
    server = LlmTestServer().start()
    server.reply_text('Du sprichst Deutsch [S1].')
    previous = services._composer
    services._composer = LlmComposer(server.base_url, 'test-model', None, 5.0)
    try:
        ask(api, 'Which languages do I speak?')
    finally:
        services._composer = previous
        server.stop()
    system, prompt = server.requests[-1].message('system'), server.requests[-1].messages[-1]['content']
    assert 'standing instructions' in system and 'follow the more recent one' in system
    assert system.index('Always answer in bullet points') < system.index('Stop using bullet points')
    assert '<memory>\n' not in system and '<memory>\n' in prompt  # directives in the system prompt, memory as data apart


def test_a_question_about_one_speaker_is_not_answered_from_the_others_words(api: Api, worker: Worker) -> None:
    # Given two people talking: Caroline ran a charity race, Melanie only asked about it
    caroline = 'I ran a charity race for mental health last Saturday, it made me realize how much self-care matters.'
    melanie = 'Wow, a charity race! What made you realize that? I love my pottery class, it calms me.'
    messages = [{'role': 'user', 'name': 'Caroline', 'content': caroline}, {'role': 'user', 'name': 'Melanie', 'content': melanie}]
    code, body, _ = api.call('facts', 'POST', '/facts/batch', {'messages': messages, 'extract': 'per_message'})
    assert code == 202, body
    worker.drain()
    # When asked what Caroline realised, Then her own words answer it
    hers = ask(api, 'What did Caroline realize after the charity race?')
    assert hers['reply'].startswith('From memory:') and 'self-care' in hers['reply'], hers['reply']
    # When asked what Melanie realised after the race (she ran none: a false premise), Then memory holds nothing on it,
    # and Caroline's turn is neither the answer nor a note about Melanie (Melanie's own words may be listed as a note)
    theirs = ask(api, 'What did Melanie realize after the charity race?')
    assert theirs['reply'].startswith(DONT_KNOW), theirs['reply']
    assert 'self-care' not in theirs['reply'] and all('self-care' not in c['snippet'] for c in theirs['citations'])


def test_a_streamed_reply_refuses_the_same_way(api: Api, worker: Worker) -> None:
    # Given Maya's turns, When a question memory cannot answer is asked as server-sent events, Then the final frame
    # says it does not know, as the JSON reply does
    say(api, worker, *MAYA)
    raw = api.call_raw('chat', 'POST', '/chat', {'message': 'What is my cat called?', 'stream': True, 'bypassCache': True})
    frames = [json.loads(line[6:]) for line in raw['body'].splitlines() if line.startswith('data: ')]
    assert frames[-1]['done'] is True and frames[-1]['reply'].startswith(DONT_KNOW)
    assert ''.join(f.get('delta', '') for f in frames[:-1]).strip() == frames[-1]['reply'].strip()


def test_a_current_value_does_not_answer_what_someone_else_or_the_past_holds(api: Api, worker: Worker) -> None:
    # Given the user's current employer and a co-author named in passing
    say(api, worker, 'I work at Harrowgate & Finch Ltd.', 'My co-author is Dr. J. R. Tamsett.')
    assert 'Harrowgate & Finch' in ask(api, 'Where do I work?')['reply']  # the question it answers
    # Then it answers none of these: another person's past employer ("us" is the asker's team, Callum is asked about),
    # the asker's employer before this one, the co-author's institution (his name is not his institution)
    for question in ('Which company employed Callum before he came to us?', 'Where did I work before this job?',
                     'Which institution is my co-author at these days?'):  # fmt: skip
        reply = ask(api, question)['reply']
        assert reply.startswith(DONT_KNOW) and 'Harrowgate' not in reply.split('Closest notes')[0], (question, reply)
        assert 'Your co-author is' not in reply
