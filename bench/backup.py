"""Backup and restore at scale: ``agent-memory export`` and ``import`` of a context of N facts, against a local gateway.

Run from the repository root::

    PYTHONPATH=shared:infra:. .venv/bin/python bench/backup.py --facts 3000

A fresh gateway (``python -m local_runtime``, as ``make dev`` runs it) gets a context built through the API: facts as
triples (a third of them superseded twice, so histories are in the file), one passage per ten facts (``infer: none``
turns, embedded). Then the CLI exports it and imports it into a new context, each as a subprocess whose peak RSS is
read from ``getrusage``; the gateway's peak RSS (``VmHWM``) is read before and after each step. The copy is exported
again and compared with the original, record for record. The report goes to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.support.gateway import MGMT, ROOT, Gateway
from tests.support.ports import free_port

PER_REQUEST = 100  # triples per POST /facts (the API's limit)


def build(gateway: Gateway, facts: int) -> None:
    triples = []
    for n in range(facts):
        entity = {'type': 'project' if n % 2 else 'person', 'name': f'Item {n // 10}'}
        triples.append({'entity': entity, 'key': f'detail_{n % 10}', 'value': f'value {n} of item {n // 10}'})
    superseded = [{**t, 'value': f'{t["value"]} (revised {r})'} for r in (1, 2) for t in triples[: facts // 3]]
    everything = triples + superseded
    for start in range(0, len(everything), PER_REQUEST):
        body = {'infer': 'triples', 'triples': everything[start : start + PER_REQUEST]}
        code, answer = gateway.request('POST', '/api/v1/dev/facts', body)
        assert code == 200, answer
    messages = [{'role': 'user', 'content': f'Note {n}: the launch checklist item {n} for Item {n} is done.'} for n in range(facts // 10)]
    for start in range(0, len(messages), 100):
        code, answer = gateway.request('POST', '/api/v1/dev/facts/batch', {'messages': messages[start : start + 100], 'infer': 'none'})
        assert code == 200, answer


def peak_kib(pid: int) -> int:
    for line in Path(f'/proc/{pid}/status').read_text().splitlines():
        if line.startswith('VmHWM:'):
            return int(line.split()[1])
    return 0


def cli(gateway: Gateway, *args: str) -> tuple[float, int, dict[str, Any]]:
    """Run the CLI as a subprocess: (seconds, its peak RSS in KiB from its own rusage, its JSON summary)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith('AGENT_MEMORY_')}
    env |= {'AGENT_MEMORY_URL': gateway.base, 'AGENT_MEMORY_MANAGEMENT_KEY': MGMT, 'PYTHONPATH': 'shared'}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        process = subprocess.Popen([sys.executable, '-m', 'agent_memory.cli', *args], cwd=ROOT, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - started
        out.seek(0)
        err.seek(0)
        assert process.returncode == 0, err.read()[-2000:].decode(errors='replace')
        summary: dict[str, Any] = json.loads(out.read())
    return seconds, usage.ru_maxrss, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--facts', type=int, default=3000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        gateway = Gateway(folder / 'data', free_port(), {'AGENT_MEMORY_SWEEP_HOURLY_SECONDS': '3600'})  # as deployed: hourly
        try:
            started = time.monotonic()
            build(gateway, args.facts)
            built = time.monotonic() - started
            at_start = peak_kib(gateway.process.pid)
            backup = folder / 'dev.ndjson'
            export_s, export_rss, exported = cli(gateway, 'export', '--context', 'dev', '-o', str(backup))
            after_export = peak_kib(gateway.process.pid)
            assert gateway.request('POST', '/api/v1/contexts/copy', {}, key=MGMT)[0] == 201
            import_s, import_rss, imported = cli(gateway, 'import', str(backup), '--context', 'copy')
            after_import = peak_kib(gateway.process.pid)
            again = folder / 'copy.ndjson'
            cli(gateway, 'export', '--context', 'copy', '-o', str(again))
            same = backup.read_text().splitlines()[1:] == again.read_text().splitlines()[1:]
        finally:
            gateway.stop()
    counts = exported['counts']
    print(f'context: {counts.get("attribute")} attributes ({args.facts} current, the rest superseded), {counts.get("entity")} entities, '
          f'{counts.get("turn")} turns, {counts.get("memory_chunk")} passages; built through the API in {built:.1f} s')  # fmt: skip
    print(f'file: {exported["records"]} records, {int(exported["bytes"]) / 1e6:.1f} MB')
    print(f'export: {export_s:.1f} s; CLI peak RSS {export_rss / 1024:.0f} MiB; gateway peak RSS {at_start / 1024:.0f} -> '
          f'{after_export / 1024:.0f} MiB')  # fmt: skip
    print(f'import: {import_s:.1f} s ({imported["seconds"]}); CLI peak RSS {import_rss / 1024:.0f} MiB; gateway peak RSS '
          f'-> {after_import / 1024:.0f} MiB')  # fmt: skip
    print(f'the copy exports the same records: {same}')


if __name__ == '__main__':
    main()
