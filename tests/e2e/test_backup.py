"""Backup and restore through the CLI (``agent-memory export`` / ``import``) against the local gateway: a realistic
context restored into an empty one reads exactly as the original, and a bad, truncated or misplaced file writes
nothing."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import Cli
from tests.support.gateway import KEY, MGMT, Gateway
from tests.support.ports import free_port

QUERIES = ('what plan am I on?', 'where does Alice live?', 'Apollo status', 'how should answers be formatted?', 'launch next quarter')


@pytest.fixture(scope='module')
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """A gateway whose dev context holds a realistic memory (``build``)."""
    running = Gateway(tmp_path_factory.mktemp('backup') / 'data', free_port())
    build(running)
    yield running
    running.stop()


def ok(gateway: Gateway, method: str, path: str, body: Any = None, key: str = KEY) -> Any:
    code, answer = gateway.request(method, path, body, key=key)
    assert code in (200, 201, 202), (method, path, code, answer)
    return answer


def extracted(gateway: Gateway, context: str, turn_id: str) -> None:
    deadline = time.monotonic() + 60
    while (status := ok(gateway, 'GET', f'/api/v1/{context}/extractions/{turn_id}')['status']) in ('queued', 'running'):
        assert time.monotonic() < deadline, f'turn {turn_id} is still {status}'
        time.sleep(0.1)
    assert status == 'done', status


def say(gateway: Gateway, session: str, text: str, **extra: Any) -> None:
    turn = ok(gateway, 'POST', '/api/v1/dev/facts', {'text': text, 'sessionId': session, **extra})['turnId']
    extracted(gateway, 'dev', turn)


def build(gateway: Gateway) -> None:
    """Several sessions and principals' turns, extracted facts with a supersession chain, an instruction and its
    reversal, open and resolved uncertainties, scoped facts and triples, a /chat exchange and a decay step."""
    for session, scopes in (('onboarding', None), ('team-a', [['team/a']]), ('team-b', [['team/b']])):
        scoped = {'scopes': scopes} if scopes else {}
        ok(gateway, 'POST', '/api/v1/dev/sessions', {'id': session, 'metadata': {'title': session}, **scoped})
    for text in ("Hi, I'm Priya and I work at Globex.", "I'm on the Free plan.", 'Always respond in bullet points.',
                 'I moved to the Pro plan.', 'Actually, I switched to the Enterprise plan.', 'Stop using bullet points.',
                 'We might move the launch to next quarter, not decided yet.', "I'm CEO — well, co-CEO, it's complicated."):  # fmt: skip
        say(gateway, 'onboarding', text)
    say(gateway, 'team-a', 'The Apollo project is owned by Globex and its status is green.')
    say(gateway, 'team-b', 'Alice lives in Lisbon.', scopes=[['team/b']])
    for status in ('green', 'amber'):
        triple = {'entity': {'type': 'project', 'name': 'Apollo'}, 'key': 'status', 'value': status}
        ok(gateway, 'POST', '/api/v1/dev/facts', {'infer': 'triples', 'triples': [triple], 'scopes': [['team/a']], 'sessionId': 'team-a'})
    ok(gateway, 'POST', '/api/v1/dev/chat', {'message': 'What plan am I on?'})
    ok(gateway, 'POST', '/api/v1/dev/lifecycle/decay')


def reads(gateway: Gateway, context: str, key: str) -> dict[str, Any]:
    """Everything a reader sees of a context (no read here reinforces or writes)."""
    base = f'/api/v1/{context}'
    seen: dict[str, Any] = {'profile': ok(gateway, 'GET', f'{base}/profile', key=key),
                            'state': ok(gateway, 'GET', f'{base}/state?limit=500', key=key),
                            'uncertainty': ok(gateway, 'GET', f'{base}/uncertainty?limit=500', key=key),
                            'entities': ok(gateway, 'GET', f'{base}/entities?limit=500', key=key)}  # fmt: skip
    assert not seen['entities']['page']['hasMore']
    for entity in seen['entities']['entities']:
        kind, name = entity['id'].removeprefix('entity:').split('/', 1)
        detail = ok(gateway, 'GET', f'{base}/entities/{kind}/{name}', key=key)
        seen[entity['id']] = detail
        for attribute_key in {a['key'] for a in detail['attributes']} | {'plan', 'status'}:
            code, history = gateway.request('GET', f'{base}/entities/{kind}/{name}/history/{attribute_key}', key=key)
            seen[f'{entity["id"]}#{attribute_key}'] = (code, history)
    for session in ('onboarding', 'team-a', 'team-b'):
        seen[f'session {session}'] = ok(gateway, 'GET', f'{base}/sessions/{session}/turns', key=key)
    return seen


def queried(gateway: Gateway, context: str, key: str) -> list[Any]:
    """Ranked recall for a few questions: the hits as ranked and scored (the trace ids and timings differ)."""
    answers = []
    for query in QUERIES:
        answer = ok(gateway, 'POST', f'/api/v1/{context}/query', {'query': query, 'k': 10}, key=key)
        answers.append({k: answer[k] for k in ('tier', 'hits', 'contextHits', 'seedEntities')})
    assert all(a['hits'] for a in answers), answers
    return answers


def records(path: Path) -> list[str]:
    """The records of an export (its header aside)."""
    return path.read_text(encoding='utf-8').splitlines()[1:]


def test_a_restored_context_reads_exactly_as_the_original(gateway: Gateway, cli: Cli, tmp_path: Path) -> None:
    # Given a realistic context (the gateway's dev), When it is exported, and imported into a new, empty context
    backup = tmp_path / 'dev.ndjson'
    code, exported, err = cli('export', '-o', str(backup), '--context', 'dev')
    assert code == 0, err
    assert 'export [' in err and exported['output'] == str(backup) and exported['records'] == len(backup.read_text().splitlines()) - 1
    header = json.loads(backup.read_text(encoding='utf-8').splitlines()[0])
    assert header['format'] == 'agent-memory-export' and header['version'] == 1 and header['context'] == 'dev'
    assert header['counts']['attribute'] >= 8 and header['counts']['instruction'] == 2 and header['counts']['session'] >= 4
    assert 'retrieval_trace' not in header['counts'] and header['traces'] is False
    assert cli('contexts', 'create', 'restored')[0] == 0
    code, restored, err = cli('import', str(backup), '--context', 'restored')
    assert code == 0, err
    assert restored['context'] == 'restored' and restored['sourceContext'] == 'dev' and restored['counts'] == header['counts']
    assert 'check [' in err and 'send [' in err and 'write [' in err
    code, minted, _ = cli('keys', 'mint', 'restored', 'admin', 'reader')
    assert code == 0
    # Then an export of the copy is the same file, record for record (ids, times to the nanosecond, vectors, importance)
    again = tmp_path / 'restored.ndjson'
    assert cli('export', '-o', str(again), '--context', 'restored')[0] == 0
    assert records(again) == records(backup)
    # And every read matches: profile, state, entities and each attribute's history, uncertainties, session turns
    original = reads(gateway, 'dev', KEY)
    copy = reads(gateway, 'restored', minted['secret'])
    assert copy == original
    plan_history = original['entity:person/self:admin#plan'][1]
    assert [h['value'] for h in plan_history['history']][:3] == ['Enterprise', 'Pro', 'Free'], plan_history
    instructions = [i['description'] for i in original['profile']['instructions']]
    assert instructions == ['Always respond in bullet points', 'Stop using bullet points']
    assert original['state']['unknowns'] and original['uncertainty']['uncertainties']
    # And ranked recall returns the same hits with the same scores, query after query (each one reinforces the same facts)
    assert queried(gateway, 'restored', minted['secret']) == queried(gateway, 'dev', KEY)


def test_traces_are_exported_on_request_and_restored(gateway: Gateway, cli: Cli, tmp_path: Path) -> None:
    # Given a context with traces (a /chat call), When exported with --traces and imported, Then the traces come back
    ok(gateway, 'POST', '/api/v1/dev/chat', {'message': 'Where does Alice live?'})
    backup = tmp_path / 'full.ndjson'
    code, exported, err = cli('export', '-o', str(backup), '--traces')  # the key's context
    assert code == 0 and exported['context'] == 'dev', err
    assert exported['counts']['retrieval_trace'] >= 2 and exported['counts']['response_trace'] >= 2
    assert cli('contexts', 'create', 'with-traces')[0] == 0
    code, restored, err = cli('import', str(backup), '--context', 'with-traces')
    assert code == 0 and restored['counts'] == exported['counts'], err
    again = tmp_path / 'again.ndjson'
    assert cli('export', '-o', str(again), '--traces', '--context', 'with-traces')[0] == 0
    assert records(again) == records(backup)


def _file(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_text('\n'.join(lines) + '\n', encoding='utf-8')
    return path


def test_bad_truncated_or_misplaced_files_write_nothing(gateway: Gateway, cli: Cli, tmp_path: Path) -> None:
    backup = tmp_path / 'dev.ndjson'
    assert cli('export', '-o', str(backup), '--context', 'dev')[0] == 0
    lines = backup.read_text(encoding='utf-8').splitlines()
    assert cli('contexts', 'create', 'empty')[0] == 0
    before = cli('export', '--context', 'empty')[1].splitlines()[1:]  # its records (the header has the time)
    attribute = next(n for n, line in enumerate(lines) if '"record":"attribute"' in line)
    # A truncated file: refused with its last line, before anything is sent
    code, _, err = cli('import', str(_file(tmp_path, 'cut.ndjson', lines[:-3])), '--context', 'empty')
    assert code == 2 and f'cut.ndjson:{len(lines) - 3}: the file ends after' in err and 'truncated' in err
    # A line cut in the middle, a value out of range, an unknown field, a second header: the line and what is wrong
    cut_line = lines[:attribute] + [lines[attribute][:40]] + lines[attribute + 1 :]
    code, _, err = cli('import', str(_file(tmp_path, 'half.ndjson', cut_line)), '--context', 'empty')
    assert code == 2 and f'half.ndjson:{attribute + 1}: not JSON' in err
    record = json.loads(lines[attribute])
    for change, expected in (({'importanceBase': 5}, 'attribute.importanceBase must lie in [0, 2]'),
                             ({'shoeSize': 44}, "attribute has no field 'shoeSize'"),
                             ({'validFrom': 'yesterday'}, 'attribute.validFrom must be an RFC 3339 time'),
                             ({'embedding': 'f32:AAAA'}, 'attribute.embedding must hold 384 numbers')):  # fmt: skip
        bad = lines[:attribute] + [json.dumps({**record, **change})] + lines[attribute + 1 :]
        code, _, err = cli('import', str(_file(tmp_path, 'bad.ndjson', bad)), '--context', 'empty')
        assert code == 2 and f'bad.ndjson:{attribute + 1}: {expected}' in err, err
    # A conversation file given to import: it is not an export, and the error says which command takes it
    talk = _file(tmp_path, 'talk.jsonl', ['{"role": "user", "content": "hi"}'])
    code, _, err = cli('import', str(talk), '--context', 'empty')
    assert code == 2 and 'talk.jsonl:1: not an agent-memory export' in err and 'agent-memory import-conversations' in err
    # Into a context that is not empty: 409, and the context is as it was
    code, _, err = cli('import', str(backup), '--context', 'dev')
    assert code == 1 and 'HTTP 409' in err and 'not empty' in err
    # A context key cannot export or import (management key only), and says nothing of the context
    code, _, err = cli('export', '--context', 'dev', management=KEY)
    assert code == 1 and 'HTTP 401' in err
    assert cli('export', '--context', 'empty')[1].splitlines()[1:] == before


def test_the_service_refuses_what_a_client_did_not_check(gateway: Gateway, tmp_path: Path, cli: Cli) -> None:
    # Given an import sent straight to the API (no CLI checks): a bad line, a missing record, a link to nothing
    backup = tmp_path / 'dev.ndjson'
    assert cli('export', '-o', str(backup), '--context', 'dev')[0] == 0
    header, *lines = [json.loads(line) for line in backup.read_text(encoding='utf-8').splitlines()]
    assert cli('contexts', 'create', 'api-empty')[0] == 0
    base = '/api/v1/contexts/api-empty/import'

    def attempt(rows: list[Any]) -> tuple[int, Any]:
        code, opened = gateway.request('POST', base, header, key=MGMT)
        assert code == 201, opened
        job = opened['importId']
        code, staged = gateway.request('POST', f'{base}/{job}', {'startLine': 2, 'records': rows}, key=MGMT)
        if code != 200:
            return code, staged
        return gateway.request('POST', f'{base}/{job}/commit', key=MGMT)

    attribute = next(n for n, row in enumerate(lines) if row['record'] == 'attribute')
    code, problem = attempt(lines[:attribute] + [{**lines[attribute], 'confidence': 'high'}] + lines[attribute + 1 :])
    assert code == 400 and problem['detail'] == f'line {attribute + 2}: attribute.confidence must be a finite number'
    code, problem = attempt(lines[:-1])
    assert code == 400 and 'incomplete import' in problem['detail'] and 'nothing was written' in problem['detail']
    orphan = next(n for n, row in enumerate(lines) if row['record'] == 'turn')
    session = lines[orphan]['session']
    sessions = [n for n, row in enumerate(lines) if row['record'] == 'session' and row['id'] == session]
    header = {**header, 'counts': {**header['counts'], 'session': header['counts']['session'] - 1}}
    code, problem = attempt([row for n, row in enumerate(lines) if n not in sessions])
    assert code == 400 and f"turn.session names '{session}', which is not in the file" in problem['detail'], problem
    code, twice = gateway.request('POST', base, {**header, 'version': 2}, key=MGMT)
    assert code == 400 and 'format version 2 is not supported' in twice['detail']
    # Then the context is still empty: the next whole import succeeds
    code, imported, err = cli('import', str(backup), '--context', 'api-empty')
    assert code == 0, err
