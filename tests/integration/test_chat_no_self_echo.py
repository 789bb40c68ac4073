"""/chat never feeds on itself (CONTRACT §7.1): a question states nothing and a generated reply is never evidence, while
conversation turns ingested through /facts — role assistant included — are evidence at full weight. Through the
handlers on the real engine, with the extraction worker draining the queue."""

from __future__ import annotations

import json
from typing import Any

from agent_memory.composition import Services
from agent_memory.db.migrations import load_migrations
from tests.support.handlers import Api
from tests.support.mcp_rpc import rpc
from tests.support.worker import Worker


def chat(api: Api, message: str, session: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {'message': message, 'bypassCache': True} | ({'sessionId': session} if session else {})
    code, answer, _ = api.call('chat', 'POST', '/chat', body)
    assert code == 200, answer
    return answer


def passages(api: Api, query: str) -> list[str]:
    code, body, _ = api.call('retrieval', 'POST', '/query', {'query': query, 'k': 20, 'include': ['passages']})
    assert code == 200, body
    return [h['text'] for h in body['hits'] if h['source'] == 'memory_chunk']


def test_questions_and_replies_of_chat_never_come_back_as_evidence(api: Api, worker: Worker) -> None:
    # Given a fact, and eight /chat questions about it (each stores the question and the generated reply)
    api.call('facts', 'POST', '/facts', {'text': 'I work at Leeds General Infirmary.', 'infer': 'none'})
    questions = ['Where does Maya work?', 'Where do I work?', 'Which hospital employs me?', 'Where is my job?'] * 2
    replies = [chat(api, q)['reply'] for q in questions]
    worker.drain()
    # When the memory is searched by every route that returns evidence
    found = passages(api, 'Where do I work? hospital job')
    code, context, _ = api.call('retrieval', 'POST', '/context', {'query': 'Tell me where the user works'})
    assert code == 200
    # Then only what was said comes back: no earlier question, no generated reply
    assert found == ['I work at Leeds General Infirmary.']
    for text in [*questions, *replies]:
        assert text not in context['context']
    assert 'Leeds General Infirmary' in context['context']
    # And MCP recall and context, the other doors to the same evidence, return none of them either
    recalled = json.dumps(mcp_result(api, 'recall', query='Where does Maya work?', k=20))
    block = json.dumps(mcp_result(api, 'context', query='Tell me where the user works'))
    for text in [*set(questions), *set(replies)]:
        assert json.dumps(text)[1:-1] not in recalled and json.dumps(text)[1:-1] not in block
    assert 'Leeds General Infirmary' in recalled


def mcp_result(api: Api, tool: str, **arguments: Any) -> Any:
    result = rpc(api.key, 'tools/call', {'name': tool, 'arguments': arguments})['result']
    assert result['isError'] is False, result
    return result


def test_a_chat_message_that_states_and_asks_keeps_its_statement_only(api: Api, worker: Worker, services: Services) -> None:
    # Given a /chat message with a statement and a question
    answer = chat(api, 'I moved to Lisbon last month. Where is a good bakery?')
    worker.drain()
    # Then the statement is a passage and a fact; the question is neither; the transcript keeps both turns whole
    assert passages(api, 'Lisbon bakery') == ['I moved to Lisbon last month.']
    code, me, _ = api.call('views', 'GET', '/profile')
    assert code == 200 and any(f['key'] == 'location' and f['value'] == 'Lisbon' for f in me['selfFacts']), me
    code, turns, _ = api.call('sessions', 'GET', f'/sessions/{answer["sessionId"]}/turns')
    assert code == 200
    assert [(t['role'], t['content']) for t in turns['turns']] == [
        ('user', 'I moved to Lisbon last month. Where is a good bakery?'),
        ('assistant', answer['reply']),
    ]


def test_the_session_context_shows_what_was_said_not_what_chat_generated(api: Api, worker: Worker) -> None:
    api.call('facts', 'POST', '/facts', {'text': 'My dog Rex is four.', 'infer': 'none'})
    answer = chat(api, 'I love hiking. What is my dog called?')
    worker.drain()
    code, body, _ = api.call('retrieval', 'POST', f'/sessions/{answer["sessionId"]}/context', {'query': 'dog'})
    assert code == 200, body
    assert 'I love hiking. What is my dog called?' in body['context']  # the user's turn, in the recent conversation
    assert answer['reply'] not in body['context']


def test_ingested_assistant_turns_are_evidence_at_full_weight(api: Api, worker: Worker) -> None:
    # Given a conversation ingested through /facts/batch where the assistant said what the question asks about
    messages = [
        {'role': 'user', 'content': 'Can you recommend two restaurants in Porto?'},
        {'role': 'assistant', 'content': 'Try Cantinho do Avillez first, and the second one is Taberna dos Mercadores.'},
        {'role': 'user', 'content': 'I also need a hotel near the river.'},
        {'role': 'user', 'content': 'My sister prefers restaurants with vegan options.'},
    ]
    code, body, _ = api.call('facts', 'POST', '/facts/batch', {'messages': messages, 'infer': 'none'})
    assert code in (200, 202), body
    worker.drain()
    # When the agent asks what it recommended, Then its own ingested turn is the first passage
    assert passages(api, 'what was the second restaurant you recommended?')[0].startswith('Try Cantinho do Avillez')


def test_the_migration_marks_earlier_chat_turns_and_removes_their_passages(api: Api, worker: Worker, services: Services) -> None:
    # Given /chat turns stored before origins existed: a question and a reply, both with passages
    answer = chat(api, 'Where do I live? I live in Porto.')
    worker.drain()
    db = services.store(api.context_id).database
    services.db.query(db, 'UPDATE turn SET origin = NONE RETURN NONE;')
    session = services.db.query(db, 'SELECT VALUE session FROM turn LIMIT 1;')[0][0]
    reply_turn = services.db.query(db, "SELECT VALUE id FROM turn WHERE role = 'assistant';")[0][0]
    services.db.query(
        db,
        'CREATE memory_chunk CONTENT {session: $s, turn: $t, position: 0, text: $reply, scope_sets: [["*"]], created_at: time::now(), '
        "role: 'assistant', labels: []};",
        {'s': session, 't': reply_turn, 'reply': answer['reply']},
    )
    question_turn = services.db.query(db, "SELECT VALUE id FROM turn WHERE role = 'user';")[0][0]
    services.db.query(
        db,
        'CREATE memory_chunk CONTENT {session: $s, turn: $t, position: 1, text: "Where is the station?", scope_sets: [["*"]], '
        "created_at: time::now(), role: 'user', labels: []};",
        {'s': session, 't': question_turn},
    )
    # When migration 0025 runs
    migration = next(m for m in load_migrations('context') if m.name == 'chat_turns')
    services.db.query(db, migration.sql)
    # Then both turns are marked, the reply's and the question's passages are gone, the statement's stays
    origins = services.db.query(db, 'SELECT role, origin, seq FROM turn ORDER BY seq;')[0]
    assert [(r['role'], r['origin']) for r in origins] == [('user', 'chat'), ('assistant', 'chat_reply')]
    left = services.db.query(db, 'SELECT text, position FROM memory_chunk ORDER BY position;')[0]
    assert [r['text'] for r in left] == ['I live in Porto.']
