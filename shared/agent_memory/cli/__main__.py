"""Entry point of ``agent-memory`` (console script) and ``python -m agent_memory.cli``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from agent_memory.cli import __doc__ as USAGE
from agent_memory.cli.client import ApiError, Client, Unreachable
from agent_memory.cli.conversations import ConversationFileError, read_conversation

SWEEPS = ('decay', 'expire', 'purge-traces', 'reindex')
MAX_BATCH = 100  # POST /facts/batch accepts up to 100 messages
MAX_BATCH_TEXT_BYTES = 64 * 1024  # … holding at most this much text together (the service's default budget)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    client = Client(args.url, args.key, args.management_key)
    try:
        result = args.run(client, args)
    except ApiError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 1
    except ConversationFileError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 2
    except Unreachable as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 3
    if result is not None:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog='agent-memory', description=USAGE, formatter_class=argparse.RawDescriptionHelpFormatter)
    root.add_argument('--url', default=os.environ.get('AGENT_MEMORY_URL', 'http://127.0.0.1:3000'))
    root.add_argument('--key', default=os.environ.get('AGENT_MEMORY_KEY'), help='a context key (data-plane commands)')
    root.add_argument('--management-key', default=os.environ.get('AGENT_MEMORY_MANAGEMENT_KEY'))
    commands = root.add_subparsers(dest='command', required=True)

    contexts = commands.add_parser('contexts', help='create, list, show and delete contexts').add_subparsers(dest='action', required=True)
    contexts.add_parser('list').set_defaults(run=lambda c, a: c.call('GET', '/api/v1/contexts', management=True))
    for action in ('get', 'delete'):
        sub = contexts.add_parser(action)
        sub.add_argument('context')
        sub.set_defaults(run=_context_action(action))
    create = contexts.add_parser('create')
    create.add_argument('context')
    create.add_argument('--config', type=json.loads, default={}, help='JSON config, e.g. \'{"response_cache": {"enabled": false}}\'')
    create.set_defaults(run=lambda c, a: c.call('POST', f'/api/v1/contexts/{a.context}', {'config': a.config}, management=True))

    keys = commands.add_parser('keys', help="mint, rotate, revoke and list a principal's keys").add_subparsers(dest='action', required=True)
    for action in ('list', 'mint', 'rotate', 'revoke'):
        sub = keys.add_parser(action)
        sub.add_argument('context')
        sub.add_argument('principal')
        if action != 'list':
            sub.add_argument('name')
        if action in ('mint', 'rotate'):
            sub.add_argument('--ttl', type=int, help='seconds until the key expires')
        sub.set_defaults(run=_key_action(action))

    sweep = commands.add_parser('sweep', help='run a lifecycle sweep now')
    sweep.add_argument('sweep', choices=SWEEPS)
    target = sweep.add_mutually_exclusive_group(required=True)
    target.add_argument('--context')
    target.add_argument('--all', action='store_true', help='every context (needs the management key)')
    sweep.set_defaults(run=run_sweep)

    imported = commands.add_parser('import', help='import a conversation file (JSONL or a chat export)')
    imported.add_argument('file', type=Path)
    imported.add_argument('--context', required=True)
    imported.add_argument('--session', help='append to this session (default: a new one)')
    imported.add_argument('--infer', choices=('full', 'none'), default='full', help='full: extract facts; none: store the turns only')
    imported.add_argument('--batch', type=int, default=50, help=f'messages per request (1..{MAX_BATCH})')
    imported.set_defaults(run=run_import)

    export = commands.add_parser('export', help="export a context's current state as JSON")
    export.add_argument('--context', required=True)
    export.add_argument('--output', type=Path, help='write here instead of stdout')
    export.set_defaults(run=run_export)

    stats = commands.add_parser('stats', help='response cache and tier statistics')
    stats.add_argument('--context', required=True)
    stats.add_argument('--window-hours', type=int, default=24)
    stats.set_defaults(run=lambda c, a: c.call('GET', f'/api/v1/{a.context}/traces/stats', query={'windowHours': str(a.window_hours)}))
    return root


def _context_action(action: str) -> Callable[[Client, argparse.Namespace], Any]:
    method = {'get': 'GET', 'delete': 'DELETE'}[action]
    return lambda c, a: c.call(method, f'/api/v1/contexts/{a.context}', management=True) or {'deleted': a.context}


def _key_action(action: str) -> Callable[[Client, argparse.Namespace], Any]:
    def run(client: Client, args: argparse.Namespace) -> Any:
        base = f'/api/v1/contexts/{args.context}/principals/{args.principal}/keys'
        query = {'ttlSeconds': str(args.ttl)} if getattr(args, 'ttl', None) else None
        if action == 'list':
            return client.call('GET', base, management=True)
        if action == 'mint':
            return client.call('POST', f'{base}/{args.name}', {}, management=True, query=query)
        if action == 'rotate':
            return client.call('POST', f'{base}/{args.name}/rotate', management=True, query=query)
        client.call('DELETE', f'{base}/{args.name}', management=True)
        return {'revoked': args.name}

    return run


@contextmanager
def _sweep_key(client: Client, context: str) -> Iterator[str]:
    """A data-plane key for one context: the given one, or a 5-minute admin key minted and revoked around the call."""
    if client.key and not client.management_key:
        yield client.key
        return
    name = f'cli-sweep-{int(time.time() * 1000)}'
    base = f'/api/v1/contexts/{context}/principals/admin/keys/{name}'
    minted = client.call('POST', base, {}, management=True, query={'ttlSeconds': '300'})
    try:
        yield str(minted['secret'])
    finally:
        client.call('DELETE', base, management=True)


def run_sweep(client: Client, args: argparse.Namespace) -> Any:
    contexts = [args.context] if args.context else list(client.call('GET', '/api/v1/contexts', management=True))
    results = []
    for context in contexts:
        context_id = context if isinstance(context, str) else context['id']
        with _sweep_key(client, context_id) as key:
            outcome = client.call('POST', f'/api/v1/{context_id}/lifecycle/{args.sweep}', key=key)
        results.append({'context': context_id, **outcome})
        print(f'{args.sweep} {context_id}: {outcome["affected"]} affected in {outcome["ms"]} ms', file=sys.stderr)
    return {'sweep': args.sweep, 'results': results}


def progress(done: int, total: int, started: float, out: TextIO = sys.stderr) -> None:
    width = 30
    filled = width * done // max(total, 1)
    rate = done / max(time.monotonic() - started, 1e-9)
    end = '\n' if done >= total else '\r'
    print(f'[{"#" * filled}{"." * (width - filled)}] {done}/{total} messages  {rate:,.0f}/s', end=end, file=out, flush=True)


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


def run_import(client: Client, args: argparse.Namespace) -> Any:
    if not 1 <= args.batch <= MAX_BATCH:
        raise ConversationFileError(f'--batch must be in 1..{MAX_BATCH}')
    messages = read_conversation(args.file)
    session = args.session
    started = time.monotonic()
    turns, queued = 0, 0
    progress(0, len(messages), started)
    sent = 0
    for batch in batches(messages, args.batch):
        body: dict[str, Any] = {'messages': batch, 'infer': args.infer, 'extract': 'per_message'}
        if session:
            body['sessionId'] = session
        result = client.call('POST', f'/api/v1/{args.context}/facts/batch', body)
        session = result['sessionId']
        turns += len(result['turnIds'])
        queued += len(result['turnIds']) if result.get('status') == 'queued' else 0
        sent += len(batch)
        progress(sent, len(messages), started)
    return {'sessionId': session, 'turns': turns, 'queuedForExtraction': queued, 'seconds': round(time.monotonic() - started, 2)}


def run_export(client: Client, args: argparse.Namespace) -> Any:
    base = f'/api/v1/{args.context}'
    entities, cursor = [], None
    while True:
        page = client.call('GET', f'{base}/entities', query={'limit': '500', **({'cursor': cursor} if cursor else {})})
        entities.extend(page['entities'])
        cursor = page['page']['nextCursor']
        if not page['page']['hasMore'] or not cursor:
            break
    document = {
        'context': args.context,
        'exportedAt': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
        'state': client.call('GET', f'{base}/state', query={'limit': '500'}),
        'profile': client.call('GET', f'{base}/profile'),
        'entities': entities,
    }
    if args.output:
        args.output.write_text(json.dumps(document, indent=2, ensure_ascii=False) + '\n', encoding='utf-8')
        print(f'exported {len(entities)} entities to {args.output}', file=sys.stderr)
        return None
    return document


if __name__ == '__main__':
    sys.exit(main())
