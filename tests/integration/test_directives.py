"""Instructions (CONTRACT §6.4), uncertainties (§6.5) and the tentative flag on attributes."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.db.memory_store import MemoryStore
from agent_memory.domain.directives import add_instruction, record_uncertainty, resolve_uncertainty
from agent_memory.errors import BadRequest, NotFound
from tests.support.handlers import Api

ORG_A = [['org/a']]
ORG_B = [['org/b']]


def bare(ref: str) -> str:
    return ref.split(':', 1)[1]


def new_turn(api: Api, text: str = 'hello') -> str:
    status, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'none', 'text': text})
    assert status == 200, body
    return str(body['turnId'])


def get(api: Api, function: str, path: str, query: dict[str, str] | None = None) -> Any:
    status, body, _ = api.call(function, 'GET', path, query=query)
    assert status == 200, body
    return body


# ---- instructions ---------------------------------------------------------------------------


def test_restatement_merges_case_insensitively_in_an_overlapping_scope(api: Api, store: MemoryStore) -> None:
    # Given an instruction in org/a from one turn
    turn1, turn2, turn3 = new_turn(api, 'one'), new_turn(api, 'two'), new_turn(api, 'three')
    first, merged = add_instruction(store, 'Formatting', 'Always respond in bullet points', ORG_A, turn1)
    assert merged is False
    assert first['mergedCount'] == 0
    # When it is restated with different case and spacing, in an overlapping scope
    second, merged = add_instruction(store, 'formatting', '  ALWAYS respond in   bullet points ', [['org/a'], ['org/z']], turn2)
    third, merged_again = add_instruction(store, 'FORMATTING', 'always respond in bullet points', ORG_A, turn3)
    # Then it merged into the same row, counting restatements
    assert merged is True and merged_again is True
    assert second['id'] == first['id'] == third['id']
    assert second['mergedCount'] == 1
    assert third['mergedCount'] == 2
    assert store.table_counts()['instruction'] == 1
    # And the original wording and creation time are kept, and every source turn is recorded
    assert (third['label'], third['description'], third['createdAt']) == (
        'Formatting',
        'Always respond in bullet points',
        first['createdAt'],
    )
    row = store.get_instruction(bare(first['id']))
    assert row is not None
    assert sorted(str(t.id) for t in row['source_turns']) == sorted([turn1, turn2, turn3])
    assert str(row['source_turn'].id) == turn1


def test_same_instruction_in_non_overlapping_scopes_stays_separate(api: Api, store: MemoryStore) -> None:
    # Given an instruction in org/a
    a, _ = add_instruction(store, 'Tone', 'Be formal', ORG_A)
    # When the same instruction is given in the non-overlapping scope org/b
    b, merged_b = add_instruction(store, 'Tone', 'Be formal', ORG_B)
    # Then each is its own active row
    assert merged_b is False
    assert a['id'] != b['id']
    assert store.table_counts()['instruction'] == 2
    # When it is given a third time in yet another scope (two existing candidates to check against)
    c, merged_c = add_instruction(store, 'Tone', 'Be formal', [['org/c']])
    assert merged_c is False
    assert len({a['id'], b['id'], c['id']}) == 3
    # And restating in org/b merges into the org/b row only
    again, merged_again = add_instruction(store, 'tone', 'be formal', ORG_B)
    assert merged_again is True
    assert again['id'] == b['id']
    assert again['mergedCount'] == 1
    assert store.get_instruction(bare(a['id']))['merged_count'] == 0  # type: ignore[index]


def test_different_description_is_a_new_instruction(store: MemoryStore) -> None:
    # Given an instruction
    add_instruction(store, 'Formatting', 'Use bullet points', ORG_A)
    # When the same label has a different description
    _, merged = add_instruction(store, 'Formatting', 'Use numbered lists', ORG_A)
    # Then it is not merged
    assert merged is False
    assert store.table_counts()['instruction'] == 2


def test_reversal_is_a_second_active_instruction_listed_oldest_first(api: Api, store: MemoryStore) -> None:
    # Given "use bullet points", and later its reversal "stop using bullet points"
    # When both are recorded and /profile and /state are read
    older, _ = add_instruction(store, 'Formatting', 'Use bullet points', [['/']])
    newer, merged = add_instruction(store, 'Formatting', 'Stop using bullet points', [['/']])
    # Then the reversal did not revoke or merge with the earlier one
    assert merged is False
    assert older['id'] != newer['id']
    assert older['createdAt'] <= newer['createdAt']
    # And both are active in /profile and /state, oldest → newest, with createdAt
    expected = [(older['id'], 'Use bullet points', older['createdAt']), (newer['id'], 'Stop using bullet points', newer['createdAt'])]
    profile = get(api, 'views', '/profile')
    assert [(i['id'], i['description'], i['createdAt']) for i in profile['instructions']] == expected
    state = get(api, 'views', '/state')
    assert [(i['id'], i['description'], i['createdAt']) for i in state['instructions']] == expected


def test_instruction_needs_label_and_description(store: MemoryStore) -> None:
    # Given blank parts, When added, Then BadRequest and nothing stored
    with pytest.raises(BadRequest):
        add_instruction(store, '  ', 'Be brief', ORG_A)
    with pytest.raises(BadRequest):
        add_instruction(store, 'Tone', '', ORG_A)
    assert store.table_counts()['instruction'] == 0


def test_instructions_outside_the_readers_scope_are_not_listed(api: Api, store: MemoryStore) -> None:
    # Given an instruction in org/a only
    # When the admin reads /state and the store lists instructions for other regions
    add_instruction(store, 'Tone', 'Be formal', ORG_A)
    # Then the admin (reads everything) sees it, and the store filters it for a reader of org/b
    assert [i['description'] for i in get(api, 'views', '/state')['instructions']] == ['Be formal']
    assert store.list_instructions(['org/b'], 10) == []
    assert len(store.list_instructions(['org/*'], 10)) == 1


# ---- uncertainties --------------------------------------------------------------------------


def test_record_and_resolve_an_uncertainty(api: Api, store: MemoryStore) -> None:
    # Given an open uncertainty raised by one turn
    source, resolver, later = new_turn(api, 'I am CEO - well, co-CEO'), new_turn(api, 'I am co-CEO'), new_turn(api, 'x')
    recorded = record_uncertainty(store, 'alice role', 'CEO or co-CEO?', 'self_correction', [['/']], source_turn=source,
                                  entity=['person', 'alice'], key='role')  # fmt: skip
    assert (recorded['resolved'], recorded['resolvedBy'], recorded['resolvedAt'], recorded['sourceTurn']) == (False, None, None, source)
    assert recorded['entity'] == 'entity:person/alice'
    assert recorded['resolvable'] is True
    assert get(api, 'views', '/state')['unknowns'] == [{'about': 'alice role', 'reason': 'CEO or co-CEO?'}]
    assert [u['id'] for u in get(api, 'views', '/uncertainty', {'resolved': 'false'})['uncertainties']] == [recorded['id']]
    # When a later turn resolves it
    resolved = resolve_uncertainty(store, bare(recorded['id']), resolver)
    # Then it is resolved, by that turn, at a time
    assert resolved['id'] == recorded['id']
    assert resolved['resolved'] is True
    assert resolved['resolvedBy'] == resolver
    assert resolved['resolvedAt'] is not None
    # And it leaves the open lists but stays in the full list
    assert get(api, 'views', '/uncertainty', {'resolved': 'false'})['uncertainties'] == []
    assert get(api, 'views', '/state')['unknowns'] == []
    (listed,) = get(api, 'views', '/uncertainty', {'resolved': 'true'})['uncertainties']
    assert (listed['id'], listed['resolved'], listed['resolvedBy'], listed['resolvedAt']) == (
        recorded['id'], True, resolver, resolved['resolvedAt'])  # fmt: skip
    assert [u['id'] for u in get(api, 'views', '/uncertainty')['uncertainties']] == [recorded['id']]
    # When resolved a second time (even naming another turn)
    again = resolve_uncertainty(store, bare(recorded['id']), later)
    # Then the first resolution stands
    assert (again['resolved'], again['resolvedBy'], again['resolvedAt']) == (True, resolver, resolved['resolvedAt'])


def test_resolving_an_unknown_uncertainty_is_not_found(store: MemoryStore) -> None:
    # Given no such uncertainty, When resolved, Then NotFound
    with pytest.raises(NotFound):
        resolve_uncertainty(store, 'does-not-exist')


def test_uncertainty_needs_about_and_reason(store: MemoryStore) -> None:
    # Given blank parts, When recorded, Then BadRequest and nothing stored
    with pytest.raises(BadRequest):
        record_uncertainty(store, ' ', 'why', 'ambiguity', [['/']])
    with pytest.raises(BadRequest):
        record_uncertainty(store, 'what', '', 'ambiguity', [['/']])
    assert store.table_counts()['uncertainty'] == 0


def test_open_uncertainties_only_in_state_unknowns(api: Api, store: MemoryStore) -> None:
    # Given two uncertainties, one of them resolved
    # When /state and the uncertainty list are read
    keep = record_uncertainty(store, 'meeting date', '"next Friday" is ambiguous', 'temporal', [['/']])
    gone = record_uncertainty(store, 'tone', 'sarcasm?', 'sarcasm', [['/']])
    resolve_uncertainty(store, bare(gone['id']))
    # Then /state unknowns has only the open one, about + reason only
    assert get(api, 'views', '/state')['unknowns'] == [{'about': keep['about'], 'reason': keep['reason']}]
    # And the full list filters both ways
    assert [u['id'] for u in get(api, 'views', '/uncertainty', {'resolved': 'false'})['uncertainties']] == [keep['id']]
    assert [u['id'] for u in get(api, 'views', '/uncertainty', {'resolved': 'true'})['uncertainties']] == [gone['id']]


# ---- tentative attributes -------------------------------------------------------------------


def test_attribute_is_tentative_while_its_turn_has_an_open_uncertainty(api: Api, store: MemoryStore) -> None:
    # Given a turn that wrote alice's role (triples + text, so the attribute's source is the turn)
    status, body, _ = api.call('facts', 'POST', '/facts', {
        'infer': 'triples', 'text': "I'm CEO - well, co-CEO, it's complicated",
        'triples': [{'entity': {'type': 'person', 'name': 'alice'}, 'key': 'role', 'value': 'CEO'}],
    })  # fmt: skip
    assert status == 200, body
    turn_id = body['turnId']
    assert turn_id
    # And an unrelated attribute from another turn
    status, other, _ = api.call('facts', 'POST', '/facts', {
        'infer': 'triples', 'text': 'I live in Paris',
        'triples': [{'entity': {'type': 'person', 'name': 'alice'}, 'key': 'city', 'value': 'Paris'}],
    })  # fmt: skip
    assert status == 200, other

    def tentative() -> dict[str, bool]:
        return {a['key']: a['tentative'] for a in get(api, 'entities', '/entities/person/alice')['attributes']}

    assert tentative() == {'role': False, 'city': False}
    # When an uncertainty is recorded against that turn
    uncertainty = record_uncertainty(store, 'alice role', 'CEO or co-CEO?', 'self_correction', [['/']], source_turn=turn_id)
    # Then only the attribute from that turn is tentative (in entity reads, history and /state)
    assert tentative() == {'role': True, 'city': False}
    (history_row,) = get(api, 'entities', '/entities/person/alice/history/role')['history']
    assert history_row['tentative'] is True
    state_flags = {a['key']: a['tentative'] for a in get(api, 'views', '/state')['knowledge']['attributes']}
    assert state_flags == {'role': True, 'city': False}
    # When the uncertainty is resolved
    resolve_uncertainty(store, bare(uncertainty['id']), other['turnId'])
    # Then nothing is tentative any more
    assert tentative() == {'role': False, 'city': False}
    assert get(api, 'entities', '/entities/person/alice/history/role')['history'][0]['tentative'] is False


def test_attributes_without_a_source_turn_are_never_tentative(api: Api, store: MemoryStore) -> None:
    # Given a triples write with no text (no turn) and an open uncertainty with no source turn
    # When the attribute is read back
    status, body, _ = api.call('facts', 'POST', '/facts', {
        'infer': 'triples', 'triples': [{'entity': {'type': 'person', 'name': 'alice'}, 'key': 'role', 'value': 'CEO'}],
    })  # fmt: skip
    assert status == 200 and body['turnId'] is None
    record_uncertainty(store, 'something', 'unclear', 'ambiguity', [['/']])
    # Then the attribute is not tentative (a missing turn never matches a missing turn)
    (attribute,) = get(api, 'entities', '/entities/person/alice')['attributes']
    assert attribute['tentative'] is False
