"""Reading conversation files for ``agent-memory import-conversations``, as a stream of events in bounded memory.

Formats (``--format auto`` tells them apart by their shape):

* **ChatGPT** ``conversations.json``: a JSON array of conversations, each with a ``mapping`` tree of nodes
  ``{message: {author: {role}, content: {content_type, parts}, create_time, metadata, recipient}, parent, children}``.
  The branch that ends at ``current_node`` is followed (edits and regenerations on other branches are left out);
  without one, the last child at each fork.
* **Claude** ``conversations.json``: a JSON array of ``{uuid, name, created_at, chat_messages: [{sender: "human" |
  "assistant", text, content: [{type: "text", text}], created_at}]}``.
* **Generic**: JSONL (one ``{role, content, ts?, name?}`` per line), a JSON array of such messages, or
  ``{"messages": [...]}``: one conversation.

From the two chat exports, system and tool messages, an assistant's calls to its tools, hidden and empty messages are
skipped and counted; in a generic file every message is kept and an unknown role is an error. A message longer than a
turn may hold is split into consecutive turns of the same role. Every problem names the file and the position.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_memory.cli.jsonstream import InputError, Item, array_items, document, first_character, first_line_is_json, line_items
from agent_memory.clock import iso, parse_observation
from agent_memory.speakers import check_speaker_name

FORMATS = ('auto', 'chatgpt', 'claude', 'jsonl')
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
ConversationFileError = InputError  # the name earlier versions of the CLI exported


@dataclass(frozen=True)
class Limits:
    item_chars: int = 64 * 1024 * 1024  # one conversation of an export, one JSONL line, or a whole JSON document
    text_bytes: int = 64 * 1024  # one turn's text (the service's default limit): longer messages are split


@dataclass(frozen=True)
class Conversation:
    """Starts a conversation; its messages follow until the next one."""

    source: str  # chatgpt | claude | generic
    title: str | None
    external_id: str | None
    created_at: str | None
    where: str

    def metadata(self) -> dict[str, Any]:
        found = {'source': self.source, 'title': self.title, 'externalId': self.external_id, 'createdAt': self.created_at}
        return {k: v for k, v in found.items() if v is not None}


@dataclass(frozen=True)
class Message:
    role: str
    content: str
    ts: str | None
    name: str | None
    where: str

    def wire(self) -> dict[str, Any]:
        """The message as ``POST /facts/batch`` takes it."""
        found = {'role': self.role, 'content': self.content, 'ts': self.ts, 'name': self.name}
        return {k: v for k, v in found.items() if v is not None}


@dataclass(frozen=True)
class Skipped:
    reason: str  # system, tool, tool call, hidden, empty, other role


Event = Conversation | Message | Skipped


def read_conversations(path: Path, fmt: str = 'auto', limits: Limits = Limits()) -> Iterator[Event]:
    """The conversations of ``path`` as events, in file order, reading one conversation (or JSONL line) at a time."""
    if fmt not in FORMATS:
        raise InputError(f'unknown format {fmt!r} (expected one of {", ".join(FORMATS)})')
    items, lines = _items(path, fmt, limits)
    open_generic = seen_conversation = False
    for number, item in enumerate(items, start=1):
        where = f'{path}:{item.line}' if lines else f'{path}: item {number} (line {item.line})'
        kind = _kind(item.value, where)
        if fmt in ('chatgpt', 'claude') and kind != fmt or fmt == 'jsonl' and kind != 'message':
            raise InputError(f'{where}: not a {fmt} {"message" if fmt == "jsonl" else "conversation"} (it looks like a {kind})')
        if kind == 'message':
            if seen_conversation:
                raise InputError(f'{where}: a single message among whole conversations')
            if not open_generic:
                open_generic = True
                yield Conversation('generic', None, None, None, where)
            yield from _generic_message(item.value, where, limits)
            continue
        if open_generic:
            raise InputError(f'{where}: a whole conversation among single messages')
        seen_conversation = True
        if kind == 'chatgpt':
            yield from _chatgpt(item.value, where, limits)
        elif kind == 'claude':
            yield from _claude(item.value, where, limits)
        else:
            yield from _message_list(item.value, where, limits)


def _items(path: Path, fmt: str, limits: Limits) -> tuple[Iterator[Item], bool]:
    """The file's top-level values and whether they are JSONL lines."""
    if not path.is_file():
        raise InputError(f'{path}: no such file')
    start = first_character(path)
    if not start:
        raise InputError(f'{path}: empty file')
    if start == '[' and fmt == 'jsonl':
        raise InputError(f'{path}: not JSONL (a JSON array; try --format auto)')
    if start == '[':
        return array_items(path, limits.item_chars), False
    if start == '{' and (fmt == 'jsonl' or first_line_is_json(path, limits.item_chars)):
        return line_items(path, limits.item_chars), True
    if start == '{':
        return iter([document(path, limits.item_chars)]), False
    raise InputError(f'{path}: expected JSONL, a JSON array or a JSON object')


def _kind(value: Any, where: str) -> str:
    if isinstance(value, dict):
        if isinstance(value.get('mapping'), dict):
            return 'chatgpt'
        if isinstance(value.get('chat_messages'), list):
            return 'claude'
        if isinstance(value.get('messages'), list):
            return 'messages'
        if 'role' in value or 'author' in value:
            return 'message'
    raise InputError(f'{where}: expected a message {{role, content}} or a conversation (ChatGPT or Claude export)')


# ---- ChatGPT -----------------------------------------------------------------------------------------------------


def _chatgpt(conversation: dict[str, Any], where: str, limits: Limits) -> Iterator[Event]:
    title = _optional_text(conversation.get('title'), f'{where}: title')
    external_id = _optional_text(conversation.get('conversation_id') or conversation.get('id'), f'{where}: id')
    where = f'{where} ({title!r})' if title else where
    yield Conversation('chatgpt', title, external_id, _timestamp(conversation.get('create_time'), where), where)
    for node_id, node in _branch(conversation['mapping'], conversation.get('current_node'), where):
        message = node.get('message')
        at = f'{where}, node {node_id!r}'
        if not isinstance(message, dict):
            yield Skipped('empty')
            continue
        author = message.get('author')
        role = author.get('role') if isinstance(author, dict) else None
        metadata = message.get('metadata')
        if role in ('system', 'tool'):
            yield Skipped(str(role))
        elif role not in ('user', 'assistant'):
            yield Skipped('other role')
        elif isinstance(metadata, dict) and metadata.get('is_visually_hidden_from_conversation'):
            yield Skipped('hidden')
        elif role == 'assistant' and message.get('recipient') not in (None, 'all'):
            yield Skipped('tool call')
        else:
            text = _chatgpt_text(message.get('content'), at)
            if not text.strip():
                yield Skipped('empty')
            else:
                yield from _messages(role, text, _timestamp(message.get('create_time'), at), None, at, limits)


def _branch(mapping: dict[str, Any], current: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The nodes from the root to ``current`` (or, without it, to the leaf reached by the last child at each fork)."""
    if not isinstance(current, str) or current not in mapping:
        current = _last_leaf(mapping, where)
    path: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    node_id: Any = current
    while node_id is not None:
        if not isinstance(node_id, str):
            raise InputError(f'{where}: a node parent is not a string id')
        if node_id in seen:
            raise InputError(f'{where}: the mapping has a cycle at node {node_id!r}')
        seen.add(node_id)
        node = mapping.get(node_id)
        if not isinstance(node, dict):
            raise InputError(f'{where}: node {node_id!r} is missing from the mapping')
        path.append((node_id, node))
        node_id = node.get('parent')
    return iter(path[::-1])


def _last_leaf(mapping: dict[str, Any], where: str) -> str | None:
    roots = [key for key, node in mapping.items() if isinstance(node, dict) and node.get('parent') is None]
    if not roots:
        if mapping:
            raise InputError(f'{where}: the mapping has no root node (a cycle?)')
        return None
    node_id, seen = roots[0], set()
    while True:
        if node_id in seen:
            raise InputError(f'{where}: the mapping has a cycle at node {node_id!r}')
        seen.add(node_id)
        node = mapping.get(node_id)
        children = node.get('children') if isinstance(node, dict) else None
        if not isinstance(children, list) or not children or not isinstance(children[-1], str) or children[-1] not in mapping:
            return node_id
        node_id = children[-1]


def _chatgpt_text(content: Any, where: str) -> str:
    if not isinstance(content, dict):
        return ''
    parts = content.get('parts')
    if isinstance(parts, list):  # text, multimodal_text: strings, and objects for images and files (left out)
        return _text('\n'.join(p for p in parts if isinstance(p, str)), where)
    text = content.get('text')  # code, tether_quote
    return _text(text, where) if isinstance(text, str) else ''


# ---- Claude ------------------------------------------------------------------------------------------------------------


def _claude(conversation: dict[str, Any], where: str, limits: Limits) -> Iterator[Event]:
    title = _optional_text(conversation.get('name'), f'{where}: name')
    external_id = _optional_text(conversation.get('uuid'), f'{where}: uuid')
    where = f'{where} ({title!r})' if title else where
    yield Conversation('claude', title, external_id, _timestamp(conversation.get('created_at'), where), where)
    for number, message in enumerate(conversation['chat_messages'], start=1):
        at = f'{where}, message {number}'
        if not isinstance(message, dict):
            raise InputError(f'{at}: expected an object')
        role = {'human': 'user', 'assistant': 'assistant'}.get(str(message.get('sender')))
        if role is None:
            yield Skipped('other role')
            continue
        text = _text(_claude_text(message), at)
        if not text.strip():
            yield Skipped('empty')
            continue
        yield from _messages(role, text, _timestamp(message.get('created_at'), at), None, at, limits)


def _claude_text(message: dict[str, Any]) -> str:
    """The text blocks of ``content`` (tool use and results left out), else ``text``."""
    blocks = message.get('content')
    texts = [b['text'] for b in blocks if isinstance(b, dict) and b.get('type') == 'text' and isinstance(b.get('text'), str)] \
        if isinstance(blocks, list) else []  # fmt: skip
    fallback = message.get('text')
    return '\n'.join(texts) if texts else fallback if isinstance(fallback, str) else ''


# ---- generic messages ----------------------------------------------------------------------------------------------------


def _message_list(container: dict[str, Any], where: str, limits: Limits) -> Iterator[Event]:
    title = _optional_text(container.get('title'), f'{where}: title')
    yield Conversation('generic', title, None, None, where)
    for number, message in enumerate(container['messages'], start=1):
        yield from _generic_message(message, f'{where}, message {number}', limits)


def _generic_message(raw: Any, where: str, limits: Limits) -> Iterator[Event]:
    if not isinstance(raw, dict):
        raise InputError(f'{where}: expected an object with role and content')
    author = raw.get('author')
    role = str(raw.get('role') or (author.get('role') if isinstance(author, dict) else '') or '').lower()
    if role not in ROLES:
        raise InputError(f'{where}: unknown role {role!r} (expected user, assistant, system or tool)')
    content = raw.get('content')
    if isinstance(content, dict) and isinstance(content.get('parts'), list):
        content = '\n'.join(p for p in content['parts'] if isinstance(p, str))
    elif isinstance(content, list):  # content blocks: [{"type": "text", "text": ...}]
        content = '\n'.join(str(b.get('text', '')) for b in content if isinstance(b, dict) and b.get('type', 'text') == 'text')
    if content is not None and not isinstance(content, str):
        raise InputError(f'{where}: content must be text')
    if not content or not content.strip():
        yield Skipped('empty')
        return
    name = raw.get('name')
    if name is not None:
        try:
            name = check_speaker_name(_text(name, where) if isinstance(name, str) else str(name))
        except ValueError as exc:
            raise InputError(f'{where}: {exc}') from None
    ts = _timestamp(raw.get('ts', raw.get('timestamp', raw.get('created_at'))), where)
    yield from _messages(ROLES[role], _text(content, where), ts, name, where, limits)


# ---- shared --------------------------------------------------------------------------------------------------------------


def _messages(role: str, text: str, ts: str | None, name: str | None, where: str, limits: Limits) -> Iterator[Message]:
    for piece in split_text(text, limits.text_bytes):
        yield Message(role, piece, ts, name, where)


def split_text(text: str, limit: int) -> list[str]:
    """``text`` in pieces of at most ``limit`` UTF-8 bytes, cut at a line break or space where one is near."""
    pieces = []
    while len(text.encode()) > limit:
        head = text.encode()[:limit].decode('utf-8', errors='ignore')  # whole characters only
        cut = max(head.rfind('\n'), head.rfind(' '))
        if cut < len(head) // 2:
            cut = len(head)
        pieces.append(head[:cut])
        text = text[cut:]
    if text.strip() or not pieces:
        pieces.append(text)
    return pieces


def _text(value: str, where: str) -> str:
    """``value`` if it is valid Unicode (JSON's ``\\ud800`` escapes decode to unpaired surrogates, which are not)."""
    try:
        value.encode('utf-8')
    except UnicodeEncodeError as exc:
        raise InputError(f'{where}: invalid Unicode (an unpaired surrogate \\u{ord(value[exc.start]):04x})') from None
    return value


def _optional_text(value: Any, where: str) -> str | None:
    return _text(value, where) if isinstance(value, str) and value else None


def _timestamp(value: Any, where: str) -> str | None:
    """An RFC 3339 string, or seconds since the epoch (the ChatGPT export), as the RFC 3339 the API takes."""
    if value is None or value == '':
        return None
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            moment = dt.datetime.fromtimestamp(value, dt.UTC)
            return iso(parse_observation(iso(moment) or ''))
        if isinstance(value, str):
            return iso(parse_observation(_text(value, where)))
    except (ValueError, OverflowError, OSError) as exc:
        raise InputError(f'{where}: bad timestamp {value!r} ({exc})') from None
    raise InputError(f'{where}: bad timestamp {value!r} (expected RFC 3339 text or seconds since the epoch)')
