"""Export pages and the resumable commit, through the management handlers: a page at a time (the cursor walks every
kind, whatever the page size), and a commit that writes a bounded batch per call and resumes until it is done."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_memory.composition import Services
from agent_memory.domain import backup
from agent_memory.domain.params import encode_cursor
from tests.support.handlers import MANAGEMENT_KEY, Api, mgmt


def exported(context_id: str) -> list[str]:
    """Every line of the context's export, page after page."""
    lines: list[str] = []
    cursor: str | None = None
    api = Api(context_id, MANAGEMENT_KEY)
    while True:
        result = api.call_raw('contexts', 'GET', f'/api/v1/contexts/{context_id}/export', query={'cursor': cursor} if cursor else None)
        assert result['statusCode'] == 200, result
        assert result['headers']['Content-Type'] == 'application/x-ndjson'
        lines += result['body'].splitlines()
        cursor = result['headers'].get('X-Next-Cursor')
        if not cursor:
            return lines


@pytest.fixture
def filled(api: Api) -> Api:
    triples = [{'entity': {'type': 'project', 'name': f'P{n}'}, 'key': 'status', 'value': v} for n in range(4) for v in ('green', 'amber')]
    for triple in triples:
        assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple]})[0] == 200
    messages = [{'role': 'user', 'content': f'note {n}'} for n in range(5)]
    assert api.call('facts', 'POST', '/facts/batch', {'messages': messages, 'infer': 'none'})[0] == 200
    return api


def test_small_pages_hold_the_same_records_as_one(filled: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the export in one page, When pages hold 3 rows or 1 KB, Then the pages put together are the same records
    whole = exported(filled.context_id)
    assert json.loads(whole[0])['counts']['attribute'] == 8
    for rows, size in ((3, backup.PAGE_BYTES), (backup.PAGE_ROWS, 1000)):
        monkeypatch.setattr(backup, 'PAGE_ROWS', rows)
        monkeypatch.setattr(backup, 'PAGE_BYTES', size)
        assert exported(filled.context_id)[1:] == whole[1:]


def test_bad_cursors_and_flags_are_400(filled: Api) -> None:
    path = f'/api/v1/contexts/{filled.context_id}/export'
    for query in ({'cursor': 'garbage'}, {'cursor': encode_cursor([99, None, False])}, {'cursor': encode_cursor([1, ['a'], False])},
                  {'traces': 'maybe'}):  # fmt: skip
        code, problem = mgmt('GET', path.removeprefix('/api/v1/contexts'), query=query)
        assert code == 400, (query, problem)
    assert mgmt('GET', '/nowhere/export')[0] == 404


def test_the_commit_writes_a_batch_per_call_and_resumes(filled: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given an export staged for a new context, and commits that write 4 rows per call
    header, *records = [json.loads(line) for line in exported(filled.context_id)]
    target = f'{filled.context_id}c'
    assert mgmt('POST', f'/{target}', {})[0] == 201
    code, opened = mgmt('POST', f'/{target}/import', header)
    assert code == 201 and opened['records'] == len(records)
    job = f'/{target}/import/{opened["importId"]}'
    code, staged = mgmt('POST', job, {'startLine': 2, 'records': records})
    assert code == 200 and staged == {'received': len(records), 'staged': len(records)}
    monkeypatch.setattr(backup, 'COMMIT_ROWS', 4)
    monkeypatch.setattr(backup, 'COMMIT_SECONDS', 0.0)
    # When committed, Then the first call checks the links (a page, nothing written), each next one writes one batch (of
    # one kind) and says it is not done; once writing began, the import is closed to changes
    code, first = mgmt('POST', f'{job}/commit')
    assert code == 200 and first['done'] is False and first['written'] == 0 and first['counts'] is None
    code, second = mgmt('POST', f'{job}/commit')
    assert code == 200 and second['done'] is False and 0 < second['written'] <= 4
    assert mgmt('DELETE', job)[0] == 409
    assert mgmt('POST', job, {'startLine': 2, 'records': records[:1]})[0] == 409
    calls: list[dict[str, Any]] = [first, second]
    while not calls[-1]['done']:
        code, answer = mgmt('POST', f'{job}/commit')
        assert code == 200, answer
        calls.append(answer)
    # And together they wrote every record, and the copy exports as the original
    assert sum(c['written'] for c in calls) == len(records) - 1 and calls[-1]['counts'] == header['counts']
    assert exported(target)[1:] == exported(filled.context_id)[1:]
    assert mgmt('POST', f'{job}/commit')[0] == 404  # done: the import is gone


def test_an_abandoned_import_is_dropped_by_the_next_or_by_discard(filled: Api, services: Services) -> None:
    # Given an import staged and left unfinished
    header, *records = [json.loads(line) for line in exported(filled.context_id)]
    target = f'{filled.context_id}d'
    assert mgmt('POST', f'/{target}', {})[0] == 201
    staged = services.store(target)

    def opened() -> str:
        code, answer = mgmt('POST', f'/{target}/import', header)
        assert code == 201, answer
        job = f'/{target}/import/{answer["importId"]}'
        assert mgmt('POST', job, {'startLine': 2, 'records': records})[0] == 200
        return job

    first = opened()
    # When another import starts, Then the first one is gone, staged rows and all
    second = opened()
    assert mgmt('POST', f'{first}/commit')[0] == 404
    assert staged.rows('SELECT count() AS n FROM import_row GROUP ALL;')[0]['n'] == len(records) - 1
    # And a discarded import leaves nothing staged, and the context empty for the next one
    assert mgmt('DELETE', second)[0] == 204
    assert staged.rows('SELECT VALUE id FROM import_row;') == [] and staged.rows('SELECT VALUE id FROM import_job;') == []
    assert mgmt('POST', f'/{target}/import', header)[0] == 201
