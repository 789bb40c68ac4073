"""``import-conversations --wait``: polling the imported turns until they are extracted, and reporting what failed."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.cli import conversation_import
from agent_memory.cli.conversation_import import wait_for_extraction


class FakeApi:
    """Answers the two reads ``--wait`` makes; each poll of a session's turns moves the script one step on."""

    def __init__(self, script: list[dict[str, str]]) -> None:
        self.script, self.polls, self.calls = script, 0, []

    def call(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Any:
        self.calls.append(path)
        if path.endswith('/turns'):
            statuses = self.script[min(self.polls, len(self.script) - 1)]
            self.polls += 1
            return {'turns': [{'id': t, 'extraction': s} for t, s in statuses.items()] + [{'id': 'not-ours', 'extraction': 'queued'}],
                    'page': {'hasMore': False, 'nextCursor': None}}  # fmt: skip
        return {'turnId': path.rsplit('/', 1)[1], 'status': 'failed', 'error': 'extraction failed after 3 attempts: boom'}


@pytest.fixture(autouse=True)
def instant(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conversation_import, 'POLL_SECONDS', 0)


def test_waits_until_every_imported_turn_settles_and_lists_the_failures(capsys: pytest.CaptureFixture[str]) -> None:
    # Given three imported turns that settle over three polls, one of them failing (and a turn not ours, still queued)
    api = FakeApi([{'t1': 'queued', 't2': 'running', 't3': 'queued'}, {'t1': 'done', 't2': 'running', 't3': 'queued'},
                   {'t1': 'done', 't2': 'failed', 't3': 'done'}])  # fmt: skip
    # When waiting, Then the result counts them, names the failure with its error, and the bar reached 3/3
    result = wait_for_extraction(api, 'dev', {'s1': ['t1', 't2', 't3']}, 3, timeout=60)  # type: ignore[arg-type]
    assert result == {'done': 2, 'failed': 1, 'waiting': 0, 'timedOut': False,
                      'failures': [{'turnId': 't2', 'error': 'extraction failed after 3 attempts: boom'}]}  # fmt: skip
    assert api.polls == 3 and api.calls[-1] == '/api/v1/dev/extractions/t2'
    assert '3/3 turns' in capsys.readouterr().err


def test_gives_up_after_the_timeout() -> None:
    api = FakeApi([{'t1': 'done', 't2': 'queued'}])
    result = wait_for_extraction(api, 'dev', {'s1': ['t1', 't2']}, 2, timeout=0)  # type: ignore[arg-type]
    assert result == {'done': 1, 'failed': 0, 'waiting': 1, 'timedOut': True, 'failures': []}
