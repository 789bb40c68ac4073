"""Reading conversation files for ``agent-memory import``: JSONL of ``{role, content, ts}`` or a chat export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROLES = {
    'user': 'user',
    'human': 'user',
    'assistant': 'assistant',
    'ai': 'assistant',
    'bot': 'assistant',
    'model': 'assistant',
    'system': 'system',
    'tool': 'tool',
}


class ConversationFileError(ValueError):
    """The file is not a conversation this importer understands (the message says where)."""


def read_conversation(path: Path) -> list[dict[str, Any]]:
    """Messages in order, from JSONL (one ``{role, content, ts?}`` per line) or JSON: a list of messages,
    ``{"messages": [...]}``, or a chat export whose ``mapping`` holds ``message`` nodes (by ``create_time``)."""
    text = path.read_text(encoding='utf-8')
    if not text.strip():
        raise ConversationFileError(f'{path}: empty file')
    try:
        raw_messages = [(m, f'{path}: message {i}') for i, m in enumerate(_messages_of(json.loads(text), path), start=1)]
    except json.JSONDecodeError:
        raw_messages = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    raw_messages.append((json.loads(line), f'{path}:{number}'))
                except json.JSONDecodeError as exc:
                    raise ConversationFileError(f'{path}:{number}: not JSON ({exc.msg})') from exc
    messages = [m for raw, where in raw_messages if (m := _message(raw, where)) is not None]
    if not messages:
        raise ConversationFileError(f'{path}: no messages')
    return messages


def _messages_of(document: Any, path: Path) -> list[Any]:
    if isinstance(document, list):
        return document
    if isinstance(document, dict) and isinstance(document.get('messages'), list):
        return list(document['messages'])
    if isinstance(document, dict) and isinstance(document.get('mapping'), dict):
        nodes = [n['message'] for n in document['mapping'].values() if isinstance(n, dict) and isinstance(n.get('message'), dict)]
        return sorted(nodes, key=lambda m: m.get('create_time') or 0)
    if isinstance(document, dict) and ('role' in document or 'author' in document):
        return [document]
    raise ConversationFileError(f'{path}: expected JSONL, a list of messages, {{"messages": [...]}} or a chat export')


def _message(raw: Any, where: str) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        raise ConversationFileError(f'{where}: expected an object with role and content')
    author = raw.get('author')
    role = str(raw.get('role') or (author.get('role') if isinstance(author, dict) else '') or '').lower()
    if role not in ROLES:
        raise ConversationFileError(f'{where}: unknown role {role!r}')
    content = raw.get('content')
    if isinstance(content, dict) and isinstance(content.get('parts'), list):  # the common chat-export shape
        content = '\n'.join(p for p in content['parts'] if isinstance(p, str))
    elif isinstance(content, list):  # content blocks: [{"type": "text", "text": ...}]
        content = '\n'.join(str(b.get('text', '')) for b in content if isinstance(b, dict))
    if not isinstance(content, str) or not content.strip():
        return None  # empty turns (tool stubs, deleted messages) are skipped
    message: dict[str, Any] = {'role': ROLES[role], 'content': content}
    ts = raw.get('ts') or raw.get('timestamp')
    if isinstance(ts, str) and ts:
        message['ts'] = ts
    return message
