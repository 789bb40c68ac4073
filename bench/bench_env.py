"""Imported before anything else by the benchmark scripts: the repository on ``sys.path`` and a quiet service
environment on an in-memory SurrealDB (the scripts run in-process; nothing here talks to AWS)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [p for p in (str(ROOT / 'shared'), str(ROOT / 'infra'), str(ROOT)) if p not in sys.path]
os.environ.setdefault('AGENT_MEMORY_DB_URL', 'mem://')
os.environ.setdefault('AGENT_MEMORY_KEY_SECRET', 'bench-secret')
os.environ.setdefault('POWERTOOLS_LOG_LEVEL', 'ERROR')
os.environ.setdefault('POWERTOOLS_METRICS_DISABLED', 'true')
os.environ.pop('AGENT_MEMORY_QUEUE_URL', None)  # writes are stored, not queued: no extraction job runs mid-measurement


def load_handler(name: str) -> ModuleType:
    """``functions/<name>/app.py`` imported the way Lambda does it (each folder is its own code root)."""
    spec = importlib.util.spec_from_file_location(f'bench_{name}_app', ROOT / 'functions' / name / 'app.py')
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
