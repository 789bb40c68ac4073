"""`make dev`: the whole service in one process on embedded SurrealDB.

Serves every HttpApi route in template.yaml on http://127.0.0.1:$PORT (default 3000), feeds extraction
jobs to the SQS worker handler in-process, runs the sweep handlers on timers, bootstraps context ``dev``
and prints its keys, then one line per request. EMF metrics are not echoed unless AGENT_MEMORY_LOCAL_METRICS=1.
A busy port or a data folder locked by another process ends with a one-line reason (exit 1). Ctrl-C stops cleanly.
"""

from __future__ import annotations

import faulthandler
import json
import os
import secrets
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from local_runtime.console import bind_failure, locked_data_folder
from local_runtime.events import schedule_event
from local_runtime.gateway import HandlerRegistry, make_server
from local_runtime.local_queue import LocalQueue
from local_runtime.template_routes import Schedule, http_routes, load_template, schedules, sqs_worker_dir

ROOT = Path(__file__).resolve().parents[2]
SECRETS_FILE = 'local-secrets.json'
# How often the local timers fire, by schedule expression; env overrides help demos and tests.
_INTERVALS = {'hour': 'AGENT_MEMORY_SWEEP_HOURLY_SECONDS', 'day': 'AGENT_MEMORY_SWEEP_DAILY_SECONDS'}


def _local_secrets(data_dir: Path) -> dict[str, str]:
    """Secrets that env does not provide are generated once and kept in the data folder (mode 0600)."""
    path = data_dir / SECRETS_FILE
    stored: dict[str, str] = json.loads(path.read_text()) if path.exists() else {}
    wanted = {
        'key_secret': os.environ.get('AGENT_MEMORY_KEY_SECRET') or stored.get('key_secret') or secrets.token_urlsafe(32),
        'management_key': os.environ.get('AGENT_MEMORY_MANAGEMENT_KEY')
        or stored.get('management_key')
        or f'amm_{secrets.token_urlsafe(24)}',
        'bootstrap_key': os.environ.get('AGENT_MEMORY_BOOTSTRAP_KEY') or stored.get('bootstrap_key') or f'am_{secrets.token_urlsafe(32)}',
    }
    if wanted != stored:
        path.write_text(json.dumps(wanted, indent=2))
        path.chmod(0o600)
    return wanted


def _interval(schedule: Schedule) -> float:
    expression = schedule.expression
    for unit, variable in _INTERVALS.items():
        if unit in expression or (unit == 'day' and expression.startswith('cron(')):
            return float(os.environ.get(variable) or (3600 if unit == 'hour' else 86400))
    return 3600.0


def _start_timers(registry: HandlerRegistry, stop: threading.Event) -> list[threading.Thread]:
    template = load_template(ROOT / 'template.yaml')
    threads = []
    for schedule in schedules(template, ROOT):
        interval = _interval(schedule)

        def loop(schedule: Schedule = schedule, interval: float = interval) -> None:
            while not stop.wait(interval):
                try:
                    registry.invoke(schedule.code_dir, schedule_event(schedule.function))
                except Exception as exc:  # a failed sweep must not kill the timer; it logs and retries next tick
                    print(f'[local] sweep {schedule.function} failed: {exc}', file=sys.stderr)

        thread = threading.Thread(target=loop, name=f'timer-{schedule.function}', daemon=True)
        thread.start()
        threads.append(thread)
        print(f'[local] timer {schedule.function}: every {interval:g}s ({schedule.expression})')
    return threads


def _resend_lost_jobs(services: Any) -> None:
    from agent_memory.domain.extraction_resend import resend_all_pending

    try:
        resent = resend_all_pending(services)
    except Exception as exc:  # the hourly sweep still re-sends them later
        print(f'[local] re-sending the extractions of the previous run failed: {exc}', file=sys.stderr)
        return
    if resent:
        print(f'[local] re-sent {resent} extraction jobs the previous run had not finished', flush=True)


def main() -> int:
    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 <pid>` prints every thread's stack: for a request that hangs
    data_dir = Path(os.environ.get('AGENT_MEMORY_DATA_DIR') or ROOT / '.data').resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    local = _local_secrets(data_dir)
    os.environ['AGENT_MEMORY_DATA_DIR'] = str(data_dir)
    os.environ['AGENT_MEMORY_KEY_SECRET'] = local['key_secret']
    os.environ['AGENT_MEMORY_MANAGEMENT_KEY'] = local['management_key']
    os.environ.setdefault('POWERTOOLS_SERVICE_NAME', 'agent-memory')
    os.environ.setdefault('POWERTOOLS_METRICS_NAMESPACE', 'AgentMemory')
    os.environ.setdefault('POWERTOOLS_LOG_LEVEL', 'WARNING')
    if os.environ.get('AGENT_MEMORY_LOCAL_METRICS') != '1':
        os.environ.setdefault('POWERTOOLS_METRICS_DISABLED', 'true')

    template = load_template(ROOT / 'template.yaml')
    routes = http_routes(template, ROOT)
    registry = HandlerRegistry()
    host, port = os.environ.get('HOST', '127.0.0.1'), int(os.environ.get('PORT', '3000'))
    try:
        server = make_server(host, port, routes, registry)  # bound before the database opens: a busy port fails fast
    except OSError as exc:
        print(f'[local] {bind_failure(exc, host, port)}', file=sys.stderr)
        return 1

    from agent_memory.composition import get_services, reset_services
    from agent_memory.domain.contexts import bootstrap
    from agent_memory.errors import StoreUnavailable

    try:
        services = get_services()
    except StoreUnavailable as exc:
        server.server_close()
        print(f'[local] {locked_data_folder(data_dir) if "already locked" in str(exc) else exc}', file=sys.stderr)
        return 1
    context_id = os.environ.get('AGENT_MEMORY_BOOTSTRAP_CONTEXT') or 'dev'
    bootstrap(services.control, services.store, context_id, local['bootstrap_key'])
    local_queue = None
    if services.queue is None:  # no AGENT_MEMORY_QUEUE_URL: extraction jobs run in-process
        local_queue = LocalQueue(registry, sqs_worker_dir(template, ROOT), max_receives=services.max_receives).start()
        services.queue = local_queue
        # The jobs of the previous process died with it (kill -9 runs no shutdown code): send them again now.
        threading.Thread(target=_resend_lost_jobs, args=(services,), name='resend-lost-jobs', daemon=True).start()
    stop = threading.Event()
    _start_timers(registry, stop)

    def shutdown(*_: Any) -> None:
        stop.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGINT, shutdown)
    signal.signal(signal.SIGTERM, shutdown)
    print(f'[local] Agent Memory on http://{host}:{port}  ({len(routes)} routes, data in {data_dir})')
    print(f'[local] management key: {local["management_key"]}')
    print(f'[local] context "{context_id}" key: {local["bootstrap_key"]}')
    print(f'[local] API reference: http://{host}:{port}/docs')
    print(f'[local] try: curl -H "Authorization: Bearer {local["bootstrap_key"]}" http://{host}:{port}/api/v1/{context_id}/me', flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
        if local_queue is not None:
            local_queue.stop()
        reset_services()
        print('[local] stopped', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
