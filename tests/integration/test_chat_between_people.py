"""Two people chatting through POST /facts/batch (LoCoMo's shape, sentences written for this test): stage 0 stores their
lasting preferences on each speaker and nothing else — no instruction from encouragement or proverbs, no reaction to
something shown, no vague "a project" (issue 11)."""

from __future__ import annotations

from agent_memory.clock import utcnow
from agent_memory.db.inspection_reads import InspectionReads
from agent_memory.db.memory_store import MemoryStore
from tests.support.handlers import Api
from tests.support.worker import Worker

CHAT = [
    ('Joanna', "Never say never! I'm all about dramas and romcoms."),
    ('Nate', 'Wow, looks great! Where did you take this picture? I love the dark sky and green scenery.'),
    ('Joanna', "Hey Nate, I'm working on a new project - a thriller set in a small town. Always up for something sweet."),
    ('Nate', "Thanks! Always staying filled with self-belief. Don't ever quit on what you love. What can I say, I love turtles."),
    ('Joanna', 'Harry Potter is my favorite book. It reminded me why I love writing.'),
]


def entity_facts(api: Api, name: str) -> set[tuple[str, str]]:
    code, entity, _ = api.call('entities', 'GET', f'/entities/person/{name}')
    assert code == 200, entity
    return {(a['key'], a['value']) for a in entity['attributes']}


def test_a_chat_between_two_people_stores_each_ones_preferences_and_no_instruction(api: Api, worker: Worker, store: MemoryStore) -> None:
    # Given a conversation between Joanna and Nate sent as a named batch, When the worker extracts it, Then each
    # speaker's preferences land on them and no instruction is stored
    messages = [{'role': 'user', 'name': name, 'content': text, 'ts': '2023-05-08T13:56:00Z'} for name, text in CHAT]
    code, body, _ = api.call('facts', 'POST', '/facts/batch', {'messages': messages, 'extract': 'per_message'})
    assert code == 202, body

    worker.drain()

    assert InspectionReads(store).profile(('person', 'self:admin'), (), ['*'], utcnow(), 10).instructions == []
    code, state, _ = api.call('views', 'GET', '/state')
    assert code == 200 and state['instructions'] == [], state['instructions']
    assert entity_facts(api, 'Joanna') == {
        ('likes', 'dramas and romcoms'),
        ('favorite_book', 'Harry Potter'),
        ('likes', 'writing'),
    }
    assert entity_facts(api, 'Nate') == {('likes', 'turtles')}


def test_instruments_and_games_someone_plays_accumulate(api: Api, worker: Worker) -> None:
    # Given Melanie saying she plays two instruments, When both turns are extracted, Then both are current (plays is a
    # set)
    messages = [
        {'role': 'user', 'name': 'Melanie', 'content': 'Yeah, I play clarinet!', 'ts': '2023-05-08T13:56:00Z'},
        {'role': 'user', 'name': 'Melanie', 'content': 'I also play the violin these days.', 'ts': '2023-06-08T13:56:00Z'},
    ]
    assert api.call('facts', 'POST', '/facts/batch', {'messages': messages, 'extract': 'per_message'})[0] == 202

    worker.drain()

    assert entity_facts(api, 'Melanie') == {('plays', 'clarinet'), ('plays', 'violin')}
