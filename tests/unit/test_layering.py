"""The layers import only downwards (docs/architecture.md, "Layers"), read from the source's import statements.

The repository (``db/``) imports nothing from the domain, the API or the composition root; the domain and extraction
import nothing from the repository (they depend on ``domain/ports.py``; the composition root builds the stores); the
typed rows and the leaf modules import nothing from the service; ``models.py`` and ``config.py`` import no layer; and
the SDK's record ids stay inside ``db/``. A probe module written for the test shows each import rule can fail. A module still being
moved across the boundary is listed in ``PENDING`` (none is now): the checks expect it to fail (strict), so the list
has to shrink when it moves.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / 'shared' / 'agent_memory'
LEAVES = ('clock', 'vocabulary', 'errors', 'write_ops', 'plan_reads', 'speakers', 'config')
PENDING: dict[str, str] = {}


def modules(folder: str) -> list[Path]:
    return sorted(p for p in (PACKAGE / folder).rglob('*.py') if '__pycache__' not in p.parts)


def imported(path: Path) -> Iterator[str]:
    """Every module name ``path`` imports (relative imports do not occur in this code base)."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f'{node.module}.{alias.name}' for alias in node.names)


def under(name: str, prefixes: Sequence[str]) -> bool:
    return any(name == prefix or name.startswith(prefix + '.') for prefix in prefixes)


def forbidden_imports(paths: Iterable[Path], prefixes: Sequence[str], root: Path = PACKAGE) -> dict[str, list[str]]:
    """Each module of ``paths`` that imports one of ``prefixes`` (or a module under one), with what it imports.

    Every import statement counts: at the top, under ``if TYPE_CHECKING:`` and inside a function alike."""
    found = {}
    for path in paths:
        bad = sorted({m for m in imported(path) if under(m, prefixes)})
        if bad:
            found[path.relative_to(root).as_posix()] = bad
    return found


def domain_modules(root: Path = PACKAGE) -> list[Path]:
    return sorted(p for folder in ('domain', 'extraction') for p in (root / folder).rglob('*.py') if '__pycache__' not in p.parts)


LAYERS = ('agent_memory.domain', 'agent_memory.extraction', 'agent_memory.db', 'agent_memory.api', 'agent_memory.composition')


def names_record_ids(path: Path) -> bool:
    source = ast.parse(path.read_text(), str(path))
    called = {n.func.id for n in ast.walk(source) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    named = {n.id for n in ast.walk(source) if isinstance(n, ast.Name)}
    return 'rid' in called or 'RecordID' in named or any(m.startswith('agent_memory.db.sdk') for m in imported(path))


def marked(folder: str) -> list[object]:
    """The modules of ``folder``, the pending ones expected to fail."""
    params = []
    for path in modules(folder):
        name = path.relative_to(PACKAGE).as_posix()
        marks = [pytest.mark.xfail(reason=PENDING[name], strict=True)] if name in PENDING else []
        params.append(pytest.param(path, id=name, marks=marks))
    return params


@pytest.mark.parametrize('path', marked('db'))
def test_the_repository_imports_no_layer_above_it(path: Path) -> None:
    # Given a repository module, When its imports are read, Then none is the domain, the API or the composition root
    above = [m for m in imported(path) if m.startswith(('agent_memory.domain', 'agent_memory.api', 'agent_memory.composition'))]
    assert above == []


@pytest.mark.parametrize('path', [p for folder in ('domain', 'api', 'mcp_server', 'extraction', 'rows') for p in marked(folder)])
def test_record_ids_stay_in_the_repository(path: Path) -> None:
    # Given a module above db/, When its source is read, Then it neither builds nor names a SurrealDB record id
    assert not names_record_ids(path)


@pytest.mark.parametrize('path', [*modules('rows'), *(PACKAGE / f'{leaf}.py' for leaf in LEAVES)], ids=lambda p: p.name)
def test_rows_and_leaves_import_nothing_of_the_service_but_rows(path: Path) -> None:
    # Given a typed-row or leaf module, When its imports are read, Then only other rows come from the service
    service = [m for m in imported(path) if m.startswith('agent_memory') and not m.startswith('agent_memory.rows')]
    assert service == []


def test_the_domain_does_not_import_the_composition_root() -> None:
    # Given every domain module, When their imports are read, Then none reaches up to the composition root, the API or
    # an adapter
    upward = {
        p.relative_to(PACKAGE).as_posix(): m
        for p in modules('domain')
        for m in imported(p)
        if m.startswith(('agent_memory.composition', 'agent_memory.api', 'agent_memory.adapters'))
    }
    assert upward == {}


def test_the_domain_imports_nothing_from_the_repository() -> None:
    # Given every domain and extraction module, When their imports are read (TYPE_CHECKING ones included),
    # Then none names agent_memory.db: the domain sees the stores only through domain/ports.py
    assert forbidden_imports(domain_modules(), ['agent_memory.db']) == {}


def test_models_and_config_import_no_layer() -> None:
    # Given the request models and the configuration, When their imports are read, Then neither reaches a layer
    assert forbidden_imports([PACKAGE / 'models.py', PACKAGE / 'config.py'], LAYERS) == {}


def test_the_import_rules_report_a_probe_that_breaks_them(tmp_path: Path) -> None:
    # Given a tree with a domain module importing the repository (at run time, under TYPE_CHECKING and in a function),
    # a clean extraction module, and a models.py importing the domain
    (tmp_path / 'domain').mkdir()
    (tmp_path / 'extraction').mkdir()
    (tmp_path / 'domain' / 'probe.py').write_text(
        'from typing import TYPE_CHECKING\n'
        'import agent_memory.db.connection\n'
        'from agent_memory import db\n'
        'if TYPE_CHECKING:\n'
        '    from agent_memory.db.memory_store import MemoryStore\n'
        'def later() -> None:\n'
        '    from agent_memory.db.turn_store import TurnStore\n'
    )
    (tmp_path / 'extraction' / 'clean.py').write_text('from agent_memory.dbx import y\nfrom agent_memory.rows.reads import ReadFilter\n')
    (tmp_path / 'models.py').write_text('from agent_memory.domain.speakers import check_speaker_name\n')
    # When the same checks read that tree
    domain = forbidden_imports(domain_modules(tmp_path), ['agent_memory.db'], tmp_path)
    models = forbidden_imports([tmp_path / 'models.py'], LAYERS, tmp_path)
    # Then the probe is reported with every offending import, and nothing else is
    assert domain == {
        'domain/probe.py': [
            'agent_memory.db',
            'agent_memory.db.connection',
            'agent_memory.db.memory_store',
            'agent_memory.db.memory_store.MemoryStore',
            'agent_memory.db.turn_store',
            'agent_memory.db.turn_store.TurnStore',
        ]
    }
    assert models == {'models.py': ['agent_memory.domain.speakers', 'agent_memory.domain.speakers.check_speaker_name']}


NOT_ROWS = {
    'db/retrieval_store.py:filter_params': 'the bound SQL parameters of a filter',
    'db/predicates.py:visibility_params': 'the bound SQL parameters of a grant region',
    'db/records.py:content_of': 'a write op as the bound CONTENT parameter of its statement',
    'db/write_emitters.py:session_content': 'a new session as the bound CONTENT of its CREATE (the write plan and POST /sessions)',
    'db/memory_store.py:MemoryStore.rows': 'the raw query primitive the stores build their typed reads on (tests inspect with it)',
    'db/lexical_score.py:scored_select': 'a statement and its bound SQL parameters',
}


def returns_untyped_rows(path: Path) -> list[str]:
    """Public functions and methods of ``path`` annotated to return ``dict[str, Any]`` (alone or in a list/union)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ClassDef):
            methods = [(f'{node.name}.{f.name}', f) for f in node.body if isinstance(f, ast.FunctionDef)]
        elif isinstance(node, ast.Module):
            methods = [(f.name, f) for f in node.body if isinstance(f, ast.FunctionDef)]
        else:
            continue
        for name, function in methods:
            returned = ast.unparse(function.returns) if function.returns else ''
            public = not function.name.startswith('_')
            if public and 'dict[str, Any]' in returned and f'{path.relative_to(PACKAGE).as_posix()}:{name}' not in NOT_ROWS:
                found.append(name)
    return found


@pytest.mark.parametrize('path', marked('db'))
def test_no_repository_function_returns_an_untyped_row(path: Path) -> None:
    # Given a repository module, When its public signatures are read, Then none returns dict[str, Any] rows
    assert returns_untyped_rows(path) == []


RAW_QUERIES = ('rows', 'q')  # MemoryStore's raw query primitives: their dicts are turned into typed rows inside db/


@pytest.mark.parametrize('path', [p for folder in ('domain', 'api', 'mcp_server', 'extraction') for p in modules(folder)], ids=str)
def test_no_layer_above_the_repository_runs_a_raw_query(path: Path) -> None:
    # Given a module above the repository, When its calls are read, Then none is a raw query (untyped rows stay in db/)
    source = ast.parse(path.read_text(), str(path))
    calls = [n for n in ast.walk(source) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    raw = [n.lineno for n in calls if isinstance(n.func, ast.Attribute) and n.func.attr in RAW_QUERIES]
    assert raw == []
