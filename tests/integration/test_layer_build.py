"""The layer build's scripts (infra/layers): sourceless third-party bytecode that still imports, the bytecode check that
guards the layout, the size budget, and the smoke check's plan for every function of template.yaml.

The built layers themselves are checked by `make deploy-check` (sam build, smoke.py under python3.12, sizes.py)."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

from layers import bytecode, check_bytecode, sizes, smoke

from tests.support.handlers import ROOT


def fake_layer(tmp_path: Path) -> Path:
    out = tmp_path / 'python'
    (out / 'thirdparty' / 'sub').mkdir(parents=True)
    (out / 'thirdparty' / '__init__.py').write_text('from thirdparty.sub.leaf import VALUE\n')
    (out / 'thirdparty' / 'sub' / '__init__.py').write_text('')
    (out / 'thirdparty' / 'sub' / 'leaf.py').write_text('VALUE = 42\n\ndef where():\n    raise RuntimeError("here")\n')
    (out / 'thirdparty' / 'data.json').write_text('{}')
    (out / 'single.py').write_text('NAME = "single"\n')
    (out / 'ours').mkdir()
    (out / 'ours' / '__init__.py').write_text('from thirdparty import VALUE\n')
    (out / 'broken.py').write_text('def (:\n')  # no interpreter compiles this: it stays as it is
    (out / 'lazy').mkdir()  # reads its own source at import, as anyio's __init__ does
    (out / 'lazy' / '__init__.py').write_text('import inspect, sys\nSOURCE = inspect.getsource(sys.modules[__name__])\n')
    (out / 'lazy' / 'part.py').write_text('PART = 1\n')
    return out


def test_third_party_modules_become_sourceless_and_still_import(tmp_path: Path) -> None:
    # Given a layer folder with a third-party package, a top-level module, our own package and a module that does not compile
    out = fake_layer(tmp_path)
    # When it is compiled keeping our package's sources
    failed = bytecode.compile_layer(out, {'ours'}, ('lazy/__init__.py',))
    # Then third-party code is sourceless bytecode where the sources were, ours keeps sources beside __pycache__
    assert failed == [out / 'broken.py']
    assert not list((out / 'thirdparty').rglob('*.py')) and not list((out / 'thirdparty').rglob('__pycache__'))
    assert {p.relative_to(out).as_posix() for p in out.rglob('*.pyc') if '__pycache__' not in p.parts} == {
        'thirdparty/__init__.pyc', 'thirdparty/sub/__init__.pyc', 'thirdparty/sub/leaf.pyc', 'single.pyc', 'lazy/part.pyc'
    }  # fmt: skip
    # a module that reads its own source keeps it, with its bytecode in __pycache__
    assert [p.relative_to(out).as_posix() for p in (out / 'lazy').rglob('*.py')] == ['lazy/__init__.py']
    assert list((out / 'lazy' / '__pycache__').glob('__init__.*.pyc'))
    assert (out / 'thirdparty' / 'data.json').is_file() and (out / 'broken.py').is_file()
    assert (out / 'ours' / '__init__.py').is_file() and list((out / 'ours' / '__pycache__').glob('__init__.*.pyc'))
    # and everything imports from it in a fresh interpreter, tracebacks naming the file where Lambda mounts the layer
    script = (
        'import ours, single, lazy, lazy.part, thirdparty.sub.leaf as leaf\n'
        'assert ours.VALUE == 42 and single.NAME == "single" and leaf.__file__.endswith("leaf.pyc")\n'
        'assert "getsource" in lazy.SOURCE and lazy.part.PART == 1\n'
        'try:\n    leaf.where()\nexcept RuntimeError as e:\n    print(e.__traceback__.tb_next.tb_frame.f_code.co_filename)\n'
    )
    run = subprocess.run([sys.executable, '-I', '-B', '-c', f'import sys; sys.path.insert(0, {str(out)!r})\n{script}'],
                         capture_output=True, text=True, check=True)  # fmt: skip
    assert run.stdout.strip() == '/opt/python/thirdparty/sub/leaf.py'


def test_the_modules_that_read_their_own_source_keep_it() -> None:
    # Given the pinned third-party packages the layers ship (installed in the dev venv at the same versions), When their
    # modules are searched for code that reads a module's own source at import, Then those are exactly the modules
    # bytecode.py keeps sources for (a package upgrade that adds one fails here, not silently in Lambda)
    site = Path(next(p for p in sys.path if p.endswith('site-packages')))
    reads_itself = re.compile(r'install_lazy_importer\(\)|getsource\(sys\.modules\[__name__\]|getsource\(__import__\(__name__')
    found = set()
    for requirements in (ROOT / 'infra' / 'layers').glob('*/requirements.txt'):
        for name in re.findall(r'^([A-Za-z0-9_.-]+)==', requirements.read_text(encoding='utf-8'), re.MULTILINE):
            for top in _top_level(site, name):
                for source in (site / top).rglob('*.py') if (site / top).is_dir() else [site / f'{top}.py']:
                    if source.is_file() and reads_itself.search(source.read_text(encoding='utf-8', errors='replace')):
                        found.add(source.relative_to(site).as_posix())
    assert found - {'anyio/_lazyimport.py'} == set(bytecode.SOURCES_NEEDED)


def _top_level(site: Path, distribution: str) -> list[str]:
    """The top-level packages and modules a distribution installed (its RECORD)."""
    normalised = re.sub(r'[-_.]+', '_', distribution).lower()
    (info,) = [d for d in site.glob('*.dist-info') if re.sub(r'[-_.]+', '_', d.name.split('-')[0]).lower() == normalised]
    record = (info / 'RECORD').read_text(encoding='utf-8').splitlines()
    tops = {line.split(',')[0].split('/')[0] for line in record}
    return sorted(t.removesuffix('.py') for t in tops if not t.endswith(('.dist-info', '.data', '.pth')) and not t.startswith('..'))


def test_compiling_with_another_python_changes_nothing(tmp_path: Path) -> None:
    # Given a layer folder, When bytecode.py runs under an interpreter that is not python3.12, Then it warns and leaves
    # the sources (another version's sourceless bytecode would not import on Lambda at all)
    out = fake_layer(tmp_path)
    before = sorted(p.relative_to(out) for p in out.rglob('*'))
    if sys.version_info[:2] == (3, 12):
        return  # the dev venv is 3.11; under 3.12 this is the normal build, tested above
    assert bytecode.main([str(out), 'ours']) == 0
    assert sorted(p.relative_to(out) for p in out.rglob('*')) == before


def write_pyc(path: Path, magic: bytes, flags: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(magic + flags.to_bytes(4, 'little') + bytes(8))


def test_bytecode_check_accepts_the_layout_and_names_each_fault(tmp_path: Path) -> None:
    # Given a built layer in the expected layout
    layer = tmp_path / 'SharedLayer'
    py = layer / 'python'
    magic = check_bytecode.MAGIC_312
    write_pyc(py / 'lib' / '__init__.pyc', magic, 0b01)
    (py / 'agent_memory').mkdir(parents=True)
    (py / 'agent_memory' / 'x.py').write_text('')
    write_pyc(py / 'agent_memory' / '__pycache__' / 'x.cpython-312.pyc', magic, 0b01)
    (py / 'lib' / '__init__.py').write_text('')  # a module that needs its source keeps it, with its cached bytecode
    write_pyc(py / 'lib' / '__pycache__' / '__init__.cpython-312.pyc', magic, 0b01)
    # When it is checked, Then nothing is reported
    assert check_bytecode.problems(layer, ('agent_memory',), ('lib/__init__.py',)) == []
    assert 'a source left beside' in '\n'.join(check_bytecode.problems(layer, ('agent_memory',), ()))
    # Given each fault in turn, Then the check names it
    (py / 'lib' / 'left.py').write_text('')
    write_pyc(py / 'lib' / 'old.pyc', (3495).to_bytes(2, 'little') + b'\r\n', 0b01)  # python3.11's magic
    write_pyc(py / 'lib' / 'checked.pyc', magic, 0b11)
    (py / 'lib' / 'sub' / '__pycache__').mkdir(parents=True)
    (py / 'agent_memory' / 'y.py').write_text('')
    found = '\n'.join(check_bytecode.problems(layer, ('agent_memory',), ('lib/__init__.py',)))
    for fault in ('left.py: a source left', 'old.pyc: not python3.12', 'checked.pyc: not an unchecked-hash', 'a __pycache__ in',
                  'y.py: no y.cpython-312.pyc'):  # fmt: skip
        assert fault in found, found


def test_python312_magic_number_is_the_one_checked() -> None:
    # Given importlib's magic number table (3.12 = 3531), When compared, Then the check's constant is 3.12's
    if sys.version_info[:2] == (3, 12):
        assert importlib.util.MAGIC_NUMBER == check_bytecode.MAGIC_312
    assert check_bytecode.MAGIC_312 == b'\xcb\r\r\n'


def test_size_budget_is_80_percent_of_the_unzipped_limit() -> None:
    # Given Lambda's 250 MB unzipped limit, When totals around 80 % of it are judged, Then above 80 % fails
    assert sizes.LIMIT == 262_144_000 and sizes.BUDGET == 0.80
    assert sizes.verdict(int(0.8 * sizes.LIMIT)) == 'ok'
    assert sizes.verdict(int(0.8 * sizes.LIMIT) + 1) == 'over budget'
    assert sizes.verdict(sizes.LIMIT + 1) == 'OVER THE LIMIT'


def test_smoke_plan_covers_every_function_with_its_layers_and_samples() -> None:
    # Given template.yaml, When the smoke check plans its runs, Then every function runs from its build folder and its
    # layers, with at least one sample event, and the layer checks follow the layers
    from local_runtime.template_routes import load_template_long_form

    template = load_template_long_form(ROOT / 'template.yaml')
    planned = smoke.plans(template, {'AGENT_MEMORY_DB_URL': 'ws://db'})
    functions = [n for n, r in template['Resources'].items() if r['Type'] == 'AWS::Serverless::Function']
    assert [name for name, _, _ in planned] == functions
    for name, config, env in planned:
        layers = [Path(p).parent.name for p in config['paths'][1:]]
        assert Path(config['paths'][0]).name == name and layers[0] == 'SharedLayer', name
        assert config['embeds'] == ('EmbeddingsLayer' in layers) and config['mcp'] == ('McpLayer' in layers), name
        assert config['events'] and all(Path(p).is_file() for p in config['events']), name
        assert env['AGENT_MEMORY_DB_URL'] == 'ws://db' and env['AGENT_MEMORY_SECRET_ID'] == '', name
        assert env['AGENT_MEMORY_KEY_SECRET'], name
    mcp = next(c for n, c, _ in planned if n == 'McpFunction')
    assert any(json.loads(Path(p).read_text())['routeKey'] == 'POST /mcp' for p in mcp['events'])
