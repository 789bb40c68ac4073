"""``agent-memory import-conversations``: each conversation of a file becomes a session of turns.

The file is read twice, each time as a stream: once to check all of it and count what it holds (a bad file is refused
before anything is sent), then to send it, conversation by conversation, in batches within the service's limits
(``POST /facts/batch``; an ``Idempotency-Key`` per batch makes a retried request safe). With ``--wait`` the sessions'
turns are polled until every one is extracted, and the failures are listed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from agent_memory.cli.client import Client
from agent_memory.cli.common import Incomplete, UsageError, context_of
from agent_memory.cli.conversations import Conversation, Limits, Message, Skipped, read_conversations
from agent_memory.cli.jsonstream import InputError
from agent_memory.cli.progress import Progress

MAX_BATCH = 100  # POST /facts/batch accepts up to 100 messages
MAX_BATCH_TEXT_BYTES = 64 * 1024  # … holding at most this much text together (the service's default budget)
POLL_SECONDS = 0.5
TURN_PAGE = 500
MAX_FAILURES_LISTED = 20


@dataclass
class Scan:
    conversations: int = 0
    messages: int = 0
    skipped: Counter[str] = field(default_factory=Counter)


def scan(events: Iterator[Conversation | Message | Skipped]) -> Scan:
    found = Scan()
    for event in events:
        if isinstance(event, Conversation):
            found.conversations += 1
        elif isinstance(event, Message):
            found.messages += 1
        else:
            found.skipped[event.reason] += 1
    return found


def batches(messages: list[dict[str, Any]], size: int) -> list[list[dict[str, Any]]]:
    """Consecutive batches of at most ``size`` messages whose texts together stay within the service's batch budget."""
    out: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    used = 0
    for message in messages:
        cost = len(str(message.get('content', '')).encode())
        if current and (len(current) >= size or used + cost > MAX_BATCH_TEXT_BYTES):
            out.append(current)
            current, used = [], 0
        current.append(message)
        used += cost
    if current:
        out.append(current)
    return out


class Sender:
    """Sends one conversation's messages in batches, each within the service's limits."""

    def __init__(self, client: Client, context: str, infer: str, size: int, progress: Progress) -> None:
        self.client, self.context, self.infer, self.size, self.progress = client, context, infer, size, progress
        self.session: str | None = None
        self.pending: list[dict[str, Any]] = []
        self.pending_bytes = 0
        self.turns: dict[str, list[str]] = {}  # session -> its imported turn ids (in order)
        self.queued = 0

    def start(self, session: str) -> None:
        self.flush()
        self.session = session
        self.turns.setdefault(session, [])

    def add(self, message: dict[str, Any]) -> None:
        cost = len(message['content'].encode())
        if self.pending and (len(self.pending) >= self.size or self.pending_bytes + cost > MAX_BATCH_TEXT_BYTES):
            self.flush()
        self.pending.append(message)
        self.pending_bytes += cost

    def flush(self) -> None:
        if not self.pending or self.session is None:
            return
        body = {'messages': self.pending, 'infer': self.infer, 'extract': 'per_message', 'sessionId': self.session}
        digest = hashlib.sha256(json.dumps([self.session, len(self.turns[self.session]), body], sort_keys=True).encode()).hexdigest()
        result = self.client.call('POST', f'/api/v1/{self.context}/facts/batch', body, headers={'Idempotency-Key': f'cli-{digest[:48]}'})
        self.turns[self.session].extend(result['turnIds'])
        self.queued += len(result['turnIds']) if result.get('status') == 'queued' else 0
        self.progress.advance(len(self.pending))
        self.pending, self.pending_bytes = [], 0


def run(client: Client, args: argparse.Namespace) -> Any:
    if not 1 <= args.batch <= MAX_BATCH:
        raise UsageError(f'--batch must be in 1..{MAX_BATCH}')
    limits = Limits()
    found = scan(read_conversations(args.file, args.format, limits))
    if not found.messages:
        raise InputError(f'{args.file}: no messages to import ({_skipped_text(found.skipped) or "nothing found"})')
    if args.session and found.conversations > 1:
        raise UsageError(f'--session appends one conversation; {args.file} holds {found.conversations}')
    context = context_of(client, args)
    started = time.monotonic()
    progress = Progress(found.messages, 'messages', 'import')
    sender = Sender(client, context, args.infer, args.batch, progress)
    for event in read_conversations(args.file, args.format, limits):
        if isinstance(event, Conversation):
            sender.start(args.session or _new_session(client, context, event))
        elif isinstance(event, Message):
            sender.add(event.wire())
    sender.flush()
    progress.finish()
    sessions = list(sender.turns)
    summary: dict[str, Any] = {
        'context': context,
        'conversations': found.conversations,
        'sessions': sessions,
        'turns': sum(len(t) for t in sender.turns.values()),
        'queuedForExtraction': sender.queued,
        'skipped': dict(found.skipped),
        'seconds': round(time.monotonic() - started, 2),
    }
    if len(sessions) == 1:
        summary['sessionId'] = sessions[0]
    if found.skipped:
        print(f'skipped {_skipped_text(found.skipped)}', file=sys.stderr)
    if args.wait and sender.queued:
        summary['extraction'] = wait_for_extraction(client, context, sender.turns, sender.queued, args.wait_timeout)
        failed = summary['extraction']['failed']
        if failed or summary['extraction']['timedOut']:
            print(json.dumps(summary, indent=2, ensure_ascii=False))
            problem = f'{failed} turn(s) failed extraction' if failed else ''
            waiting = summary['extraction']['waiting']
            problem += ('; ' if problem else '') + (f'{waiting} turn(s) still waiting after {args.wait_timeout:g} s' if waiting else '')
            raise Incomplete(problem)
    return summary


def _new_session(client: Client, context: str, conversation: Conversation) -> str:
    created = client.call('POST', f'/api/v1/{context}/sessions', {'metadata': conversation.metadata()})
    return str(created['id'])


def _skipped_text(skipped: Counter[str]) -> str:
    return ', '.join(f'{count} {reason}' for reason, count in sorted(skipped.items()))


def wait_for_extraction(client: Client, context: str, turns: dict[str, list[str]], total: int, timeout: float) -> dict[str, Any]:
    """Poll the sessions' turns until none of ours is queued or running (or ``timeout``); the failures with their errors."""
    deadline = time.monotonic() + timeout
    ours = {session: set(ids) for session, ids in turns.items()}
    settled: dict[str, str] = {}  # turn id -> done | failed, for turns that no longer change
    progress = Progress(total, 'turns', 'extraction')
    while True:
        waiting = 0
        for session, ids in ours.items():
            if all(t in settled for t in ids):
                continue
            for turn in _turns(client, context, session):
                if turn['id'] in ids and turn['id'] not in settled:
                    status = turn.get('extraction')
                    if status in ('done', 'failed'):
                        settled[turn['id']] = status
                    elif status is not None:
                        waiting += 1
        failed = [t for t, s in settled.items() if s == 'failed']
        progress.set(len(settled), f'{len(failed)} failed' if failed else '')
        if not waiting or time.monotonic() >= deadline:
            break
        time.sleep(POLL_SECONDS)
    progress.finish()
    failures = []
    for turn_id in failed[:MAX_FAILURES_LISTED]:
        status = client.call('GET', f'/api/v1/{context}/extractions/{turn_id}')
        failures.append({'turnId': turn_id, 'error': status.get('error') or status.get('llmError')})
    return {'done': len(settled) - len(failed), 'failed': len(failed), 'waiting': waiting, 'timedOut': bool(waiting), 'failures': failures}


def _turns(client: Client, context: str, session: str) -> Iterator[dict[str, Any]]:
    offset = 0
    while True:
        page = client.call('GET', f'/api/v1/{context}/sessions/{session}/turns', query={'limit': str(TURN_PAGE), 'offset': str(offset)})
        yield from page['turns']
        if not page['page']['hasMore']:
            return
        offset += len(page['turns'])
