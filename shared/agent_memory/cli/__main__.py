"""Entry point of ``agent-memory`` (console script) and ``python -m agent_memory.cli``."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

from agent_memory.cli import __doc__ as USAGE
from agent_memory.cli.client import ApiError, Client, Unreachable
from agent_memory.cli.common import Incomplete, UsageError, context_of
from agent_memory.cli.conversations import FORMATS
from agent_memory.cli.jsonstream import InputError

SWEEPS = ('decay', 'expire', 'purge-traces', 'reindex')
KEY_ENV, MANAGEMENT_KEY_ENV = 'AGENT_MEMORY_KEY', 'AGENT_MEMORY_MANAGEMENT_KEY'
SECRET_OPTIONS = ('--key', '--management-key')
# What a minted key looks like (``am_<43 url-safe characters>``): never echoed, even when it was typed in the wrong place.
_KEY_SHAPE = re.compile(r'\bamm?_[A-Za-z0-9_-]{6,}')

EXAMPLES = {
    'whoami': """examples:
  agent-memory whoami                       # the key's context, principal and grants""",
    'contexts': """examples:
  agent-memory contexts list
  agent-memory contexts create acme --config '{"response_cache": {"enabled": false}}'
  agent-memory contexts get acme
  agent-memory contexts delete acme""",
    'keys': """examples:
  agent-memory keys mint acme admin laptop --ttl 86400   # prints the secret once
  agent-memory keys list acme admin
  agent-memory keys rotate acme admin laptop
  agent-memory keys revoke acme admin laptop""",
    'sweep': """examples:
  agent-memory sweep decay                  # the context of --key
  agent-memory sweep expire --context acme --management-key "$MGMT"
  agent-memory sweep purge-traces --all     # every context (management key)""",
    'export': """examples:
  agent-memory export --context acme --output acme.ndjson             # everything but the traces
  agent-memory export --context acme --traces -o acme-full.ndjson
  agent-memory export --key "$ACME_KEY" > acme.ndjson                 # the key's context (and a management key)

The format is documented in docs/backup-format.md: a header line, then one record per line.""",
    'import': """examples:
  agent-memory contexts create acme-restored
  agent-memory import acme.ndjson --context acme-restored

The context must be empty. Every line is checked before anything is sent; the service writes the
whole file in one transaction, or nothing.""",
    'import-conversations': """examples:
  agent-memory import-conversations conversations.json            # a ChatGPT or Claude export
  agent-memory import-conversations chat.jsonl --wait              # wait for extraction, report failures
  agent-memory import-conversations notes.jsonl --infer none --session sess_1""",
    'stats': """examples:
  agent-memory stats --window-hours 168""",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f'{self.prog}: {message}', self.format_usage())


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    secrets = _typed_secrets(argv)
    try:
        args = parser().parse_args(argv)
        client = Client(args.url, args.key, args.management_key)
        result = args.run(client, args)
    except UsageError as exc:
        return _fail(f'{exc.usage}error: {exc}', secrets, 2)
    except ApiError as exc:
        return _fail(f'error: {exc}', secrets, 1)
    except InputError as exc:
        return _fail(f'error: {exc}', secrets, 2)
    except Unreachable as exc:
        return _fail(f'error: {exc}', secrets, 3)
    except Incomplete as exc:
        return _fail(f'error: {exc}', secrets, 4)
    except KeyboardInterrupt:
        return _fail('interrupted', secrets, 130)
    if result is not None:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0


def _fail(message: str, secrets: list[str], code: int) -> int:
    print(redact(message, secrets), file=sys.stderr)
    return code


def _typed_secrets(argv: list[str]) -> list[str]:
    """The keys given on the command line or in the environment, whatever else is wrong with the command line."""
    found = [os.environ.get(KEY_ENV, ''), os.environ.get(MANAGEMENT_KEY_ENV, '')]
    for i, token in enumerate(argv):
        name, equals, value = token.partition('=')
        if name in SECRET_OPTIONS:
            found.append(value if equals else (argv[i + 1] if i + 1 < len(argv) else ''))
    return [s for s in found if len(s) >= 4]


def redact(text: str, secrets: list[str]) -> str:
    """``text`` with every key it holds replaced by ``***``."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        text = text.replace(secret, '***')
    return _KEY_SHAPE.sub(lambda m: m.group(0)[: m.group(0).index('_') + 1] + '***', text)


def default_url() -> str:
    return os.environ.get('AGENT_MEMORY_URL') or f'http://127.0.0.1:{os.environ.get("PORT") or 3000}'


def _connection(defaults: bool) -> argparse.ArgumentParser:
    """The options every command takes, before or after its name (``defaults`` only on the top-level parser, so a
    subcommand's parser never overwrites what was given before the subcommand)."""
    options = _Parser(add_help=False, allow_abbrev=False)
    group = options.add_argument_group('connection (accepted before or after the command)')

    def default(value: Any) -> Any:
        return value if defaults else argparse.SUPPRESS

    group.add_argument('--url', default=default(default_url()),
                       help='the API (default: $AGENT_MEMORY_URL, else http://127.0.0.1:$PORT, PORT defaulting to 3000)')  # fmt: skip
    group.add_argument('--key', default=default(os.environ.get(KEY_ENV)), help=f'a context key (default: ${KEY_ENV})')
    group.add_argument('--management-key', default=default(os.environ.get(MANAGEMENT_KEY_ENV)),
                       help=f'the management key (default: ${MANAGEMENT_KEY_ENV})')  # fmt: skip
    group.add_argument('--context', default=default(None), help='the context (default: the one the --key belongs to)')
    return options


def parser() -> argparse.ArgumentParser:
    shared = _connection(defaults=False)
    root = _Parser(prog='agent-memory', description=USAGE, formatter_class=argparse.RawDescriptionHelpFormatter,
                   parents=[_connection(defaults=True)], allow_abbrev=False)  # fmt: skip
    commands = root.add_subparsers(dest='command', required=True, metavar='COMMAND')

    def command(name: str, help_text: str, under: Any = commands, examples: str | None = None) -> argparse.ArgumentParser:
        created: argparse.ArgumentParser = under.add_parser(
            name, help=help_text, description=help_text, parents=[shared], allow_abbrev=False,
            epilog=examples, formatter_class=argparse.RawDescriptionHelpFormatter,
        )  # fmt: skip
        return created

    command('whoami', 'the context, principal and grants of --key', examples=EXAMPLES['whoami']).set_defaults(
        run=lambda c, a: c.call('GET', '/api/v1/me')
    )

    contexts = command('contexts', 'create, list, show and delete contexts (management key)', examples=EXAMPLES['contexts'])
    actions = contexts.add_subparsers(dest='action', required=True, metavar='ACTION')
    command('list', 'every context', actions, EXAMPLES['contexts']).set_defaults(
        run=lambda c, a: c.call('GET', '/api/v1/contexts', management=True)
    )
    for action in ('get', 'delete'):
        sub = command(action, f'{action} one context', actions, EXAMPLES['contexts'])
        sub.add_argument('id', metavar='CONTEXT')
        sub.set_defaults(run=_context_action(action))
    create = command('create', 'create a context', actions, EXAMPLES['contexts'])
    create.add_argument('id', metavar='CONTEXT')
    create.add_argument('--config', type=_json_object, default={}, help='JSON config override')
    create.set_defaults(run=lambda c, a: c.call('POST', f'/api/v1/contexts/{a.id}', {'config': a.config}, management=True))

    keys = command('keys', "mint, rotate, revoke and list a principal's keys (management key)", examples=EXAMPLES['keys'])
    actions = keys.add_subparsers(dest='action', required=True, metavar='ACTION')
    for action in ('list', 'mint', 'rotate', 'revoke'):
        sub = command(action, f'{action} keys', actions, EXAMPLES['keys'])
        sub.add_argument('key_context', metavar='CONTEXT')
        sub.add_argument('principal', metavar='PRINCIPAL')
        if action != 'list':
            sub.add_argument('name', metavar='NAME')
        if action in ('mint', 'rotate'):
            sub.add_argument('--ttl', type=int, help='seconds until the key expires')
        sub.set_defaults(run=_key_action(action))

    sweep = command('sweep', 'run a lifecycle sweep now', examples=EXAMPLES['sweep'])
    sweep.add_argument('sweep', choices=SWEEPS)
    sweep.add_argument('--all', action='store_true', help='every context (needs the management key)')
    sweep.set_defaults(run=run_sweep)

    export = command('export', 'write everything of a context to a file (NDJSON; management key)', examples=EXAMPLES['export'])
    export.add_argument('--output', '-o', type=Path, help='write here (default: stdout)')
    export.add_argument('--traces', action='store_true', help='include the retrieval, response and decision traces')
    export.set_defaults(run=_lazy('agent_memory.cli.backup', 'run_export'))

    restore = command('import', 'restore an export into an empty context (management key)', examples=EXAMPLES['import'])
    restore.add_argument('file', type=Path, metavar='FILE')
    restore.add_argument('--resume', metavar='IMPORT_ID', help='finish the commit of an import that stopped part way')
    restore.set_defaults(run=_lazy('agent_memory.cli.backup', 'run_import'))

    conversations = command('import-conversations', 'import chat conversations (ChatGPT or Claude exports, JSONL), one session each',
                            examples=EXAMPLES['import-conversations'])  # fmt: skip
    conversations.add_argument('file', type=Path, metavar='FILE')
    conversations.add_argument('--format', choices=FORMATS, default='auto', help='the file format (default: told from its shape)')
    conversations.add_argument('--session', help='append to this existing session (a file of one conversation only)')
    conversations.add_argument('--infer', choices=('full', 'none'), default='full', help='full: extract facts; none: store the turns only')
    conversations.add_argument('--batch', type=int, default=50, help='messages per request (1..100)')
    conversations.add_argument('--wait', action='store_true', help='wait until every turn is extracted; report failures')
    conversations.add_argument('--wait-timeout', type=float, default=900.0, help='seconds --wait waits at most (default 900)')
    conversations.set_defaults(run=_lazy('agent_memory.cli.conversation_import', 'run'))

    stats = command('stats', 'response cache and tier statistics', examples=EXAMPLES['stats'])
    stats.add_argument('--window-hours', type=int, default=24)
    stats.set_defaults(
        run=lambda c, a: c.call('GET', f'/api/v1/{context_of(c, a)}/traces/stats', query={'windowHours': str(a.window_hours)})
    )
    return root


def _lazy(module: str, name: str) -> Callable[[Client, argparse.Namespace], Any]:
    """A command implemented in its own module, imported when it runs (``--help`` and the other commands skip it)."""

    def run(client: Client, args: argparse.Namespace) -> Any:
        import importlib

        return getattr(importlib.import_module(module), name)(client, args)

    return run


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f'not JSON: {exc.msg}') from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError('expected a JSON object')
    return value


def _context_action(action: str) -> Callable[[Client, argparse.Namespace], Any]:
    method = {'get': 'GET', 'delete': 'DELETE'}[action]
    return lambda c, a: c.call(method, f'/api/v1/contexts/{a.id}', management=True) or {'deleted': a.id}


def _key_action(action: str) -> Callable[[Client, argparse.Namespace], Any]:
    def run(client: Client, args: argparse.Namespace) -> Any:
        base = f'/api/v1/contexts/{args.key_context}/principals/{args.principal}/keys'
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
    if args.all and args.context:
        raise UsageError('sweep: give --context or --all, not both')
    contexts = list(client.call('GET', '/api/v1/contexts', management=True)) if args.all else [context_of(client, args)]
    results = []
    for context in contexts:
        context_id = context if isinstance(context, str) else context['id']
        with _sweep_key(client, context_id) as key:
            outcome = client.call('POST', f'/api/v1/{context_id}/lifecycle/{args.sweep}', key=key)
        results.append({'context': context_id, **outcome})
        print(f'{args.sweep} {context_id}: {outcome["affected"]} affected in {outcome["ms"]} ms', file=sys.stderr)
    return {'sweep': args.sweep, 'results': results}


if __name__ == '__main__':
    sys.exit(main())
