"""The conversation file readers of ``agent-memory import-conversations``: ChatGPT and Claude exports and generic JSONL,
read as a stream, and hostile files refused with their position (hand-written fixtures under tests/fixtures)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agent_memory.cli import jsonstream
from agent_memory.cli.conversations import Conversation, Limits, Message, Skipped, read_conversations, split_text
from agent_memory.cli.jsonstream import InputError

FIXTURES = Path(__file__).resolve().parents[1] / 'fixtures' / 'conversations'


def conversations(path: Path, fmt: str = 'auto', limits: Limits | None = None) -> list[tuple[Conversation, list[Message]]]:
    found: list[tuple[Conversation, list[Message]]] = []
    for event in read_conversations(path, fmt, limits or Limits()):
        if isinstance(event, Conversation):
            found.append((event, []))
        elif isinstance(event, Message):
            found[-1][1].append(event)
    return found


def skipped(path: Path) -> Counter[str]:
    return Counter(e.reason for e in read_conversations(path) if isinstance(e, Skipped))


def test_a_chatgpt_export_follows_the_current_branch_and_skips_what_is_not_said() -> None:
    # Given a ChatGPT conversations.json with a regenerated branch, a hidden system message, a tool call and its result,
    # an image part and empty nodes, When read, Then each conversation is the current branch's user and assistant text
    path = FIXTURES / 'chatgpt_conversations.json'
    (trip, trip_messages), (plan, plan_messages) = conversations(path)
    assert (trip.source, trip.title, trip.external_id) == ('chatgpt', 'Trip to Lisbon', '6f1c2a9e-0001-4a7b-9c55-1d2e3f405061')
    assert trip.metadata() == {'source': 'chatgpt', 'title': 'Trip to Lisbon', 'externalId': '6f1c2a9e-0001-4a7b-9c55-1d2e3f405061',
                               'createdAt': '2025-12-01T10:00:00.500000Z'}  # fmt: skip
    assert [(m.role, m.content) for m in trip_messages] == [
        ('user', "I'm Priya and I work at Globex. I'm planning a trip to Lisbon in May."),
        ('assistant', 'Lisbon in May is usually warm and sunny, around 22 °C.'),
        ('user', 'Great. I prefer window seats, always book me one.'),
    ]
    assert trip_messages[0].ts == '2025-12-01T10:00:10.250000Z' and "node 'n2'" in trip_messages[0].where
    assert [(m.role, m.content) for m in plan_messages] == [
        ('user', 'I moved from the Free plan to the Pro plan today.'),
        ('assistant', 'Noted: you are on the Pro plan now.'),
    ]
    assert plan.title == 'Plan change'
    assert skipped(path) == {'empty': 3, 'system': 1, 'tool call': 1, 'tool': 1}


def test_a_claude_export_takes_the_text_blocks() -> None:
    # Given a Claude export with tool blocks, a message whose text is only in `text` and an empty reply, When read, Then
    # each conversation holds the human and assistant text, the empty reply is skipped and an empty name is no title
    path = FIXTURES / 'claude_conversations.json'
    (garden, garden_messages), (visit, visit_messages) = conversations(path)
    assert (garden.source, garden.title, garden.created_at) == ('claude', 'Garden planning', '2025-11-20T09:00:00Z')
    assert [(m.role, m.content, m.ts) for m in garden_messages] == [
        ('user', 'I live in Porto and I grow tomatoes on my balcony.', '2025-11-20T09:00:05.120000Z'),
        ('assistant', "Porto's mild climate suits balcony tomatoes; water them in the morning.", '2025-11-20T09:00:20Z'),
        ('user', 'Never suggest pesticides, please.', '2025-11-20T09:01:00Z'),
    ]
    assert visit.title is None and [m.content for m in visit_messages] == ['My sister Ana is visiting next week.']
    assert skipped(path) == {'empty': 1}


def test_generic_jsonl_is_one_conversation_with_every_role_kept() -> None:
    # Given JSONL with a system line, a named speaker, content blocks, an epoch timestamp, a blank and an empty line
    path = FIXTURES / 'generic.jsonl'
    ((conversation, messages),) = conversations(path)
    # Then it is one generic conversation; roles, names and times are kept; the empty message is skipped
    assert conversation.source == 'generic' and conversation.metadata() == {'source': 'generic'}
    assert [m.wire() for m in messages] == [
        {'role': 'system', 'content': 'You are a helpful travel agent.', 'ts': '2025-10-01T08:00:00Z'},
        {'role': 'user', 'content': "Hi, I'm Tomás and I'm vegetarian.", 'ts': '2025-10-01T08:00:10Z', 'name': 'Tomás'},
        {'role': 'assistant', 'content': "Welcome, Tomás! I'll keep that in mind.", 'ts': '2025-10-01T08:00:12Z'},
        {'role': 'user', 'content': 'Book the Friday train to Coimbra.', 'ts': '2025-10-01T08:01:40Z'},
    ]
    assert messages[3].where == f'{path}:5'
    assert skipped(path) == {'empty': 1}


def test_other_generic_shapes_are_read_too(tmp_path: Path) -> None:
    # Given a JSON array of messages, a {"messages": [...]} document and a single-line JSON object, When read, Then each
    # is one conversation
    listed = tmp_path / 'list.json'
    listed.write_text(json.dumps([{'role': 'user', 'content': 'one'}, {'role': 'ai', 'content': 'two'}]), encoding='utf-8')
    wrapped = tmp_path / 'wrapped.json'
    wrapped.write_text(json.dumps({'title': 'T', 'messages': [{'role': 'human', 'content': 'three'}]}, indent=2), encoding='utf-8')
    assert [[(m.role, m.content) for m in ms] for _, ms in conversations(listed)] == [[('user', 'one'), ('assistant', 'two')]]
    ((conversation, messages),) = conversations(wrapped)
    assert conversation.title == 'T' and [(m.role, m.content) for m in messages] == [('user', 'three')]
    single = tmp_path / 'single.json'
    single.write_text(json.dumps({'messages': [{'role': 'user', 'content': 'four'}]}), encoding='utf-8')
    assert [m.content for _, ms in conversations(single) for m in ms] == ['four']


def test_an_array_is_read_one_element_at_a_time_across_chunk_boundaries(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Given 300 conversations and a 7-byte read size (every element, string and escape spans chunk boundaries)
    monkeypatch.setattr(jsonstream, 'CHUNK', 7)
    items = [{'uuid': f'c{i}', 'name': f'Chat "{i}" ✓', 'chat_messages': [{'sender': 'human', 'text': f'note {i} ☕ \\ end'}]}
             for i in range(300)]  # fmt: skip
    path = tmp_path / 'many.json'
    path.write_text(json.dumps(items, ensure_ascii=False, indent=1), encoding='utf-8')
    # When read, Then every conversation and message comes back intact, in order
    found = conversations(path)
    assert [c.external_id for c, _ in found] == [f'c{i}' for i in range(300)]
    assert [ms[0].content for _, ms in found] == [f'note {i} ☕ \\ end' for i in range(300)]


@pytest.mark.parametrize(
    ('content', 'expected'),
    [
        ('[{"uuid": "a", "chat_messages": []}, {"uuid": "b", "chat_messages": [', 'ends inside the value starting at line 1 (truncated?)'),
        ('[{"uuid": "a", "chat_messages": []},\n  ', 'the array is not closed (the file ends at line 2; truncated?)'),
        ('[{"uuid": "a", "chat_messages": []} {"uuid": "b"}]', "expected ',' or ']' at line 1, column 37"),
        ('[{"uuid": "a", "chat_messages": [}]', 'invalid JSON at line 1, column 34'),
        ('[{"uuid": "a", "chat_messages": []}]\n[]', 'unexpected content after the array at line 2, column 1'),
        ('[1, 2]', 'expected an object at line 1, column 2'),
        ('[{"mapping": {}}, {"chat_messages": []}, {"role": "user", "content": "x"}]', 'a single message among whole conversations'),
        ('[{"title": "x"}]', 'expected a message {role, content} or a conversation'),
        ('   \n', 'empty file'),
        ('"text"', 'expected JSONL, a JSON array or a JSON object'),
    ],
)
def test_malformed_files_are_refused_with_their_position(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / 'bad.json'
    path.write_text(content, encoding='utf-8')
    with pytest.raises(InputError, match=None) as refused:
        conversations(path)
    assert expected in str(refused.value) and str(path) in str(refused.value)


def test_generic_lines_are_strict(tmp_path: Path) -> None:
    # Given JSONL with an unknown role, a bad timestamp, a future timestamp, a bad speaker name or a line that is not JSON
    cases = {
        '{"role": "narrator", "content": "x"}': "unknown role 'narrator'",
        '{"role": "user", "content": "x", "ts": "yesterday"}': "bad timestamp 'yesterday'",
        '{"role": "user", "content": "x", "ts": "2999-01-01T00:00:00Z"}': 'bad timestamp',
        '{"role": "user", "content": "x", "name": "self"}': 'reserved alias',
        '{"role": "user", "content": 5}': 'content must be text',
        '{"role": "user", "content": "x"': 'not JSON',
    }
    for line, expected in cases.items():
        path = tmp_path / 'talk.jsonl'
        path.write_text('{"role": "user", "content": "fine"}\n' + line + '\n', encoding='utf-8')
        with pytest.raises(InputError) as refused:
            conversations(path)
        assert f'{path}:2' in str(refused.value) and expected in str(refused.value), line


def test_hostile_files_fail_cleanly_with_the_position(tmp_path: Path) -> None:
    # Deep nesting: the decoder's recursion limit is an error with the line, not a crash
    deep = tmp_path / 'deep.json'
    deep.write_text('[\n{"chat_messages": ' + '[' * 100_000 + ']' * 100_000 + '}]', encoding='utf-8')
    with pytest.raises(InputError, match='starting at line 2 is nested too deeply'):
        conversations(deep)
    deep_line = tmp_path / 'deep.jsonl'
    deep_line.write_text('{"role": "user", "content": "x"}\n{"role": ' + '[' * 100_000 + ']' * 100_000 + '}\n', encoding='utf-8')
    with pytest.raises(InputError, match=r'deep\.jsonl:2: nested too deeply'):
        conversations(deep_line)
    # Bad UTF-8: the byte offset of the first bad byte
    bad_bytes = tmp_path / 'latin1.json'
    bad_bytes.write_bytes(b'[{"uuid": "a", "chat_messages": [{"sender": "human", "text": "caf\xe9"}]}]')
    with pytest.raises(InputError, match=r'not UTF-8 text \(byte 65\)'):
        conversations(bad_bytes)
    # An unpaired surrogate (valid JSON, invalid Unicode)
    surrogate = tmp_path / 'surrogate.jsonl'
    surrogate.write_text('{"role": "user", "content": "bad \\ud800 text"}\n', encoding='utf-8')
    with pytest.raises(InputError, match=r'surrogate\.jsonl:1: invalid Unicode \(an unpaired surrogate \\ud800\)'):
        conversations(surrogate)
    # Huge: one conversation over the size cap, one JSONL line over its cap
    huge = tmp_path / 'huge.json'
    huge.write_text('[{"uuid": "a", "chat_messages": [{"sender": "human", "text": "' + 'x' * 5000 + '"}]}]', encoding='utf-8')
    with pytest.raises(InputError, match='starting at line 1 is larger than 1,000 characters'):
        conversations(huge, limits=Limits(item_chars=1000))
    long_line = tmp_path / 'long.jsonl'
    long_line.write_text('{"role": "user", "content": "y"}\n{"role": "user", "content": "' + 'y' * 5000 + '"}\n', encoding='utf-8')
    with pytest.raises(InputError, match=r'long\.jsonl:2: line longer than 1,000 characters'):
        conversations(long_line, limits=Limits(item_chars=1000))


def _chatgpt(mapping: dict[str, object], current: str | None) -> list[dict[str, object]]:
    return [{'title': 'Loop', 'conversation_id': 'loop', 'current_node': current, 'mapping': mapping}]


def test_cycles_in_a_chatgpt_mapping_are_refused(tmp_path: Path) -> None:
    path = tmp_path / 'conversations.json'
    node = {'message': {'author': {'role': 'user'}, 'content': {'parts': ['hi']}}}
    cycles = {
        # parent pointers that loop from the current node
        "cycle at node 'a'": _chatgpt({'a': {**node, 'parent': 'b'}, 'b': {**node, 'parent': 'a'}}, 'a'),
        # no current node and no root: every node has a parent
        'no root node': _chatgpt({'a': {**node, 'parent': 'b'}, 'b': {**node, 'parent': 'a'}}, None),
        # no current node; children pointers loop from the root
        "cycle at node 'r'": _chatgpt({'r': {**node, 'parent': None, 'children': ['c']}, 'c': {**node, 'parent': 'r', 'children': ['r']}},
                                      None),
        # a parent that is not in the mapping
        "node 'gone' is missing": _chatgpt({'a': {**node, 'parent': 'gone'}}, 'a'),
    }  # fmt: skip
    for expected, content in cycles.items():
        path.write_text(json.dumps(content), encoding='utf-8')
        with pytest.raises(InputError) as refused:
            conversations(path)
        assert expected in str(refused.value) and "item 1 (line 1) ('Loop')" in str(refused.value)


def test_a_format_named_on_the_command_line_must_match(tmp_path: Path) -> None:
    with pytest.raises(InputError, match='not a chatgpt conversation'):
        conversations(FIXTURES / 'claude_conversations.json', 'chatgpt')
    with pytest.raises(InputError, match='not JSONL'):
        conversations(FIXTURES / 'chatgpt_conversations.json', 'jsonl')
    assert len(conversations(FIXTURES / 'claude_conversations.json', 'claude')) == 2


def test_long_messages_are_split_within_the_turn_limit() -> None:
    # Given a text of 10 KB with multi-byte characters, When split at 1 KB, Then every piece fits, cuts fall at spaces,
    # and the pieces put together are the text
    text = ' '.join(f'wörd{i}' for i in range(1500))
    pieces = split_text(text, 1024)
    assert ''.join(pieces) == text and all(len(p.encode()) <= 1024 for p in pieces) and len(pieces) > 5
    assert all(p.endswith(tuple('0123456789')) for p in pieces[:-1])
    assert split_text('short', 1024) == ['short']
    assert ''.join(split_text('€' * 1000, 100)) == '€' * 1000  # no space to cut at: whole characters
