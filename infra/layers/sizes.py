"""`make sam-sizes`: unzipped sizes of the `sam build` output against Lambda's limit.

A function's deployment package plus all its layers must stay within 250 MB unzipped (262,144,000 bytes), or the
deployment fails. Reads .aws-sam/build/template.yaml (Globals layers + each function's own), sums file sizes, lists each
layer's biggest top-level entries, and exits 1 if any function is above 80 % of the limit (BUDGET): the margin keeps a
dependency bump from turning into a failed deployment. Run after `make sam-build` (`make deploy-check`, `make test`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # infra/, for local_runtime

from local_runtime.template_routes import load_template_long_form  # noqa: E402

LIMIT = 262_144_000  # Lambda: function + layers, unzipped
BUDGET = 0.80  # of LIMIT: what `make test` allows
BUILD = Path('.aws-sam/build')
TOP = 12


def tree_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum((Path(root) / name).lstat().st_size for root, _, files in os.walk(path) for name in files)


def verdict(total: int) -> str:
    """'ok' within the budget, 'over budget' above 80 % of the limit, 'OVER THE LIMIT' when Lambda would refuse it."""
    return 'OVER THE LIMIT' if total > LIMIT else 'over budget' if total > BUDGET * LIMIT else 'ok'


def mb(n: int) -> str:
    return f'{n / 1e6:9.3f} MB'


def main() -> int:
    if not (BUILD / 'template.yaml').is_file():
        print('no .aws-sam/build/template.yaml: run `make sam-build` first', file=sys.stderr)
        return 2
    template = load_template_long_form(BUILD / 'template.yaml')
    resources: dict[str, Any] = template['Resources']
    layers = {name: tree_bytes(BUILD / name) for name, r in resources.items() if r['Type'] == 'AWS::Serverless::LayerVersion'}
    global_layers = template.get('Globals', {}).get('Function', {}).get('Layers', [])

    print('Layers (unzipped):')
    for name, size in layers.items():
        print(f'  {name:28} {mb(size)}')
        root = BUILD / name / 'python'
        entries = sorted(((tree_bytes(p), p.name) for p in root.iterdir()), reverse=True) if root.is_dir() else []
        for entry_size, entry in entries[:TOP]:
            print(f'      {entry:32} {mb(entry_size)}')

    print(f'\nFunctions (own + layers; Lambda limit {LIMIT:,} bytes = 250 MB, budget {BUDGET:.0%} = {mb(int(BUDGET * LIMIT)).strip()}):')
    over = []
    for name, r in resources.items():
        if r['Type'] != 'AWS::Serverless::Function':
            continue
        refs = [ref.get('Ref') if isinstance(ref, dict) else ref for ref in global_layers + r['Properties'].get('Layers', [])]
        unknown = [str(ref) for ref in refs if ref not in layers]
        own = tree_bytes(BUILD / name)
        total = own + sum(layers[ref] for ref in refs if ref in layers)
        status = verdict(total)
        if status != 'ok':
            over.append(name)
        note = f'  + external layers {unknown} not counted' if unknown else ''
        print(f'  {name:28} own {mb(own)}  total {mb(total)}  {100 * total / LIMIT:5.1f}% of limit  {status:11}  '
              f'[{", ".join(map(str, refs))}]{note}')  # fmt: skip
    if over:
        print(f'\n{len(over)} function(s) above {BUDGET:.0%} of the unzipped limit: {", ".join(over)}', file=sys.stderr)
    return 1 if over else 0


if __name__ == '__main__':
    sys.exit(main())
