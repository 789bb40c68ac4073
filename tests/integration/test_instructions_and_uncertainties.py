"""Instructions (CONTRACT §6.4), uncertainties (§6.5) and the tentative flag, written the way clients write them:
``POST /facts`` (text through the extraction worker's stage 0, or triples) and ``POST /uncertainty/{id}/resolve``."""

from __future__ import annotations

from typing import Any

from agent_memory.clock import utcnow
from agent_memory.composition import Services
from agent_memory.domain.ports import MemoryReads
from agent_memory.rows.directives import InstructionRow
from tests.conftest import Api, Worker


def instructions(reads: MemoryReads, patterns: list[str]) -> list[InstructionRow]:
    """The active instructions ``patterns`` may read (with the profile read that returns them)."""
    return reads.profile(('person', 'self:admin'), (), patterns, utcnow(), 10).instructions


def say(api: Api, text: str, **extra: Any) -> str:
    status, body, _ = api.call('facts', 'POST', '/facts', {'text': text, **extra})
    assert status == 202, body
    return str(body['turnId'])


def get(api: Api, function: str, path: str, query: dict[str, str] | None = None) -> Any:
    status, body, _ = api.call(function, 'GET', path, query=query)
    assert status == 200, body
    return body


def write(api: Api, body: dict[str, Any]) -> dict[str, Any]:
    status, response, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', **body})
    assert status == 200, response
    return response


# ---- instructions ---------------------------------------------------------------------------


def test_restatement_merges_case_insensitively_in_an_overlapping_scope(api: Api, worker: Worker, services: Services,
                                                                       context_id: str) -> None:  # fmt: skip
    # Given an instruction said in org/a
    first = say(api, 'Always respond in bullet points.', scopes=[['org/a']])
    worker.drain()
    # When it is restated with other casing and spacing in an overlapping scope, then again in org/a
    second = say(api, 'ALWAYS respond in   bullet points.', scopes=[['org/a'], ['org/z']])
    third = say(api, 'always respond in bullet points.', scopes=[['org/a']])
    worker.drain()
    # Then one instruction holds all three, keeping its first wording, counting two restatements and every source turn
    (row,) = instructions(services.context(context_id).reads, ['*'])
    assert (row.description, row.merged_count, row.source_turn) == ('Always respond in bullet points', 2, first)
    assert sorted(row.source_turns) == sorted([first, second, third])
    assert [(i['id'], i['mergedCount']) for i in get(api, 'views', '/state')['instructions']] == [(row.ref, 2)]


def test_same_instruction_in_non_overlapping_scopes_stays_separate(api: Api, worker: Worker) -> None:
    # Given the same instruction in org/a, org/b and org/c
    for scope in ('org/a', 'org/b', 'org/c'):
        say(api, 'Always answer in French.', scopes=[[scope]])
    worker.drain()
    # Then each is its own active row
    rows = get(api, 'views', '/state')['instructions']
    assert len({r['id'] for r in rows}) == 3 and all(r['mergedCount'] == 0 for r in rows)
    # When it is restated in org/b
    say(api, 'always answer in French.', scopes=[['org/b']])
    worker.drain()
    # Then it merged into one of the three rows only
    after = get(api, 'views', '/state')['instructions']
    assert {r['id'] for r in after} == {r['id'] for r in rows}
    assert sorted(r['mergedCount'] for r in after) == [0, 0, 1]


def test_instructions_outside_the_readers_scope_are_not_listed(api: Api, worker: Worker, services: Services, context_id: str) -> None:
    # Given an instruction in org/a only
    say(api, 'Always answer in French.', scopes=[['org/a']])
    worker.drain()
    # Then the admin (reads everything) sees it, and the read is filtered for a reader of org/b but not of org/*
    assert len(get(api, 'views', '/state')['instructions']) == 1
    reads = services.context(context_id).reads
    assert instructions(reads, ['org/b']) == []
    assert len(instructions(reads, ['org/*'])) == 1


# ---- uncertainties --------------------------------------------------------------------------


def test_open_and_resolved_uncertainties_are_listed_apart(api: Api, worker: Worker) -> None:
    # Given a self-correction and a vaguely dated move, then a clarification of the first
    corrected = say(api, "I'm CEO — well, co-CEO, it's complicated.")
    say(api, 'I switched to the Pro plan a while ago.')
    worker.drain()
    session = get(api, 'facts', f'/extractions/{corrected}')
    assert session['status'] == 'done'
    (doubt,) = [u for u in get(api, 'views', '/uncertainty')['uncertainties'] if u['kind'] == 'self_correction']
    assert (doubt['resolved'], doubt['resolvedBy'], doubt['resolvedAt'], doubt['sourceTurn']) == (False, None, None, corrected)
    assert doubt['resolvable'] is True and doubt['entity'] == 'entity:person/self:admin'
    clarification = say(api, "To be clear, I'm co-CEO.")
    worker.drain()
    # Then the open list and /state's unknowns hold the vague date only, about + reason
    (open_,) = get(api, 'views', '/uncertainty', {'resolved': 'false'})['uncertainties']
    assert open_['kind'] == 'unresolved_time' and open_['resolvable'] is False
    assert get(api, 'views', '/state')['unknowns'] == [{'about': open_['about'], 'reason': open_['reason']}]
    # And the resolved list holds the self-correction, resolved by the clarification at a time
    (resolved,) = get(api, 'views', '/uncertainty', {'resolved': 'true'})['uncertainties']
    assert (resolved['id'], resolved['resolvedBy']) == (doubt['id'], clarification) and resolved['resolvedAt'] is not None
    # And the full list holds both
    assert {u['id'] for u in get(api, 'views', '/uncertainty')['uncertainties']} == {doubt['id'], open_['id']}


# ---- tentative attributes -------------------------------------------------------------------


def tentative(api: Api, entity: str = 'person/alice') -> dict[str, bool]:
    return {a['key']: a['tentative'] for a in get(api, 'entities', f'/entities/{entity}')['attributes']}


def test_attribute_is_tentative_while_its_turn_has_an_open_uncertainty(api: Api, worker: Worker) -> None:
    # Given a self-correction (an open uncertainty raised by its turn) and a plain statement in another turn
    say(api, "I'm CEO — well, co-CEO, it's complicated.")
    say(api, 'I live in Paris.')
    worker.drain()
    # Then only the title, from the doubted turn, is tentative (entity reads, history and /state)
    assert tentative(api, 'person/self:admin') == {'occupation': True, 'location': False}
    assert get(api, 'entities', '/entities/person/self:admin/history/occupation')['history'][0]['tentative'] is True
    state = {a['key']: a['tentative'] for a in get(api, 'views', '/state')['identity']['attributes']}
    assert state == {'occupation': True, 'location': False}
    # When the doubt is settled with a value
    (doubt,) = get(api, 'views', '/uncertainty', {'resolved': 'false'})['uncertainties']
    status, body, _ = api.call('views', 'POST', f'/uncertainty/{doubt["id"].split(":", 1)[1]}/resolve', {'acceptedValue': 'co-CEO'})
    assert status == 200 and body['uncertainty']['resolved'] is True
    # Then nothing is tentative any more
    assert tentative(api, 'person/self:admin') == {'occupation': False, 'location': False}


def test_attributes_without_a_source_turn_are_never_tentative(api: Api) -> None:
    # Given a triples write with no text (no turn), and an open uncertainty with no source turn
    alice = {'type': 'person', 'name': 'alice'}
    body = write(api, {'triples': [{'entity': alice, 'key': 'role', 'value': 'CEO'}]})
    assert body['turnId'] is None
    write(api, {'triples': [{'entity': alice, 'key': 'role', 'value': 'co-CEO', 'confidence': 0.4}]})  # a doubt, below the floor
    (doubt,) = get(api, 'views', '/uncertainty', {'resolved': 'false'})['uncertainties']
    assert doubt['sourceTurn'] is None
    # Then the attribute is not tentative (a missing turn never matches a missing turn)
    assert tentative(api) == {'role': False}
