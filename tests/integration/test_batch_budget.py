"""One batch costs no more than one turn of the largest size (issue 30, "Also").

Each message of ``POST /facts/batch`` is its own turn, with its own extraction budget: 100 messages of 8.8 KB (880 KB,
under the 1 MiB body limit) cost ~14 s of worker CPU, and 93 s of request CPU with ``infer: none`` on repetitive text
(embedding and full-text indexing of every passage). The messages of one batch now hold at most
``AGENT_MEMORY_MAX_BATCH_TEXT_BYTES`` (64 KiB, the text limit of one turn) together; more is 413 and writes nothing.
"""

from __future__ import annotations

import pytest

from agent_memory.composition import Services
from tests.support.db_snapshot import snapshot
from tests.support.handlers import Api

LIMIT = 64 * 1024


def _messages(total: int, count: int = 100) -> list[dict[str, str]]:
    size = total // count
    return [{'role': 'user', 'content': (f'note {i:03d} ' + 'x' * size)[:size]} for i in range(count)]


@pytest.mark.parametrize('infer', ['full', 'none'])
def test_a_batch_over_the_text_budget_is_413_and_writes_nothing(services: Services, api: Api, infer: str) -> None:
    before = snapshot(services.store(api.context_id))
    code, problem, _ = api.call('facts', 'POST', '/facts/batch', {'messages': _messages(880 * 1024), 'infer': infer})
    assert code == 413 and str(LIMIT) in problem['detail'], problem
    code, problem, _ = api.call('facts', 'POST', '/facts/batch', {'messages': _messages(LIMIT + 200), 'infer': infer})
    assert code == 413, problem
    assert snapshot(services.store(api.context_id)) == before


def test_a_batch_within_the_budget_is_stored(api: Api) -> None:
    code, body, _ = api.call('facts', 'POST', '/facts/batch', {'messages': _messages(LIMIT - 200), 'infer': 'none'})
    assert code == 200 and len(body['turnIds']) == 100, body


def test_the_cli_import_splits_a_conversation_within_the_budget() -> None:
    from agent_memory.cli.conversation_import import batches

    messages = [{'role': 'user', 'content': 'y' * 3000} for _ in range(60)]  # 180 KB in all
    split = batches(messages, 50)
    assert [m for batch in split for m in batch] == messages
    assert all(len(b) <= 50 and sum(len(m['content']) for m in b) <= LIMIT for b in split) and len(split) == 3
