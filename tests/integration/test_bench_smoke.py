"""Every bench in ``bench/`` runs its main path on tiny inputs and prints its table, so a bench that no longer runs
fails the suite instead of breaking silently (``make bench-*`` runs them at full size; bench/README.md has the figures).

Each script runs as ``make`` runs it: a fresh interpreter from the repository root, with the service's environment
left out (the bench sets its own through ``bench/bench_env.py``) and ``AGENT_MEMORY_BENCH_CACHE`` pointed at a
temporary folder, so nothing is read from or written to a real ``bench/.cache``. The LoCoMo benches run on a two-session
conversation written here in LoCoMo's format (the data set itself stays beside the repository, never needed here).
The whole file takes about a minute on two quiet cores; every run is bounded by ``TIMEOUT``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / 'bench'
TIMEOUT = 300  # seconds per script: generous for a loaded machine; a quiet one takes 1-10 s
# Imported by the benches, not run on their own: each is exercised through the benches that import it.
HELPERS = {'bench_env.py', 'bench_vectors.py', 'locomo_data.py', 'trace_questions.py', 'fleet_seed.py', 'fleet_worker.py'}
# Benches on the fleet's seeded database (bench/fleet_seed.py: minutes to seed even at its tiny scale, under
# bench/.cache/fleet, from the LoCoMo split beside the repository): too slow for the suite. `bench/fleet.py --small` is
# their smoke run; `make bench-fleet` runs fleet.py, fleet_statements.py is run by hand on a tenant it names.
ELSEWHERE = {'fleet.py', 'fleet_statements.py'}

# script, its arguments ({locomo}: the synthetic conversation's file), what its report must contain
CASES: list[tuple[str, str, list[str]]] = [
    ('auth.py', '--requests 3 --facts 5', ['measurement', 'GET /state   10-clause grant']),
    ('backup.py', '--facts 20', ['export:', 'import:', 'the copy exports the same records: True']),
    (
        'cache.py',
        '--hit-intents 1 --hit-repeats 1 --latency 0 --asks 4 --thresholds 0.92 --held-out-thresholds 0.92 --rules new '
        '--sizes 40 --queries 4 --pending 5 --before-budget 1 --pending-budget 1',
        ['## 0. One hit against one miss', '## 1. Cache economics through /chat', '## 2. Cache lookup cost against trace count'],
    ),
    ('coldstart.py', '--runs 1 --only health --skip-floors', ['## Cold start per function', '| health | 200 |']),
    ('extraction.py', '--sizes 0,10 --turns 4', ['prior facts', 'p50 ms/turn']),
    ('extraction_quality.py', '--split dev --repeat 1', ['== split: dev', 'OVERALL']),
    ('ingest.py', '--turns 6 --batch 3', ['# Ingest: 6 turns', '| worker phase |']),
    ('lifecycle.py', '--sizes 120 --skip-cold-start --in-process', ['## Set-based (LifecycleStore) vs naive', '[PASS]']),
    ('locomo.py', '--data {locomo} --conversations 0', ['evidence recall@10', 'Okapi BM25']),
    ('locomo_chat.py', '--data {locomo} --conversations 0 --per-category 1', ['| category | questions |', 'adversarial']),
    ('locomo_replay.py', '--data {locomo} --conversations 0', ['recall@10', 'as coded']),
    ('locomo_stage0.py', '--data {locomo} --conversations 0 --show 2', ['conversation 0:', 'instructions']),
    ('mcp_endpoint.py', '--runs 2 --facts 5 --warm-up 1 --cold-imports 0', ['Per-call latency', 'MCP tools/call recall']),
    ('natural.py', '--split cases --only maya', ['natural conversation, split cases', 'unanswerable: said it does not know']),
    ('query_stages.py', '--data {locomo} --conversation 0 --questions 2 --repeats 1', ['stage', 'POST /query']),
    ('remote_db.py', '--calls 2 --delays 0', ['| route | kind | round trips |', 'POST /query']),
    ('retrieval.py', '--sizes 40 --questions 3', ['HNSW (k=10', 'POST /query through the handler']),
    ('stage0_adversarial.py', '--sizes 1 --repeat 1', ['ms/KB @max', 'worst case:']),
]


def synthetic_locomo() -> list[dict[str, object]]:
    """One conversation in LoCoMo's shape (two speakers, dated sessions, ``D<session>:<turn>`` ids, questions of each
    category with their evidence turns, one adversarial), written for these tests."""
    conversation = {
        'speaker_a': 'Ana',
        'speaker_b': 'Ben',
        'session_1_date_time': '1:56 pm on 8 May, 2023',
        'session_1': [
            {'speaker': 'Ana', 'dia_id': 'D1:1', 'text': 'Hi Ben! I started a new job at Acme Robotics last week.'},
            {'speaker': 'Ben', 'dia_id': 'D1:2', 'text': 'Congrats Ana! I adopted a beagle called Max yesterday.'},
            {'speaker': 'Ana', 'dia_id': 'D1:3', 'text': 'I love hiking in the Alps, we should go together.'},
            {'speaker': 'Ben', 'dia_id': 'D1:4', 'text': 'Sure, I am free in June.'},
        ],
        'session_2_date_time': '10:00 am on 20 May, 2023',
        'session_2': [
            {'speaker': 'Ben', 'dia_id': 'D2:1', 'text': 'Max chewed my favourite shoes this morning.'},
            {'speaker': 'Ana', 'dia_id': 'D2:2', 'text': 'Ha! My sister Clara is visiting Lisbon next month.'},
            {'speaker': 'Ben', 'dia_id': 'D2:3', 'text': 'I play the violin in a small orchestra.'},
            {'speaker': 'Ana', 'dia_id': 'D2:4', 'text': 'That sounds lovely, I only play chess.'},
        ],
    }
    qa = [
        {'question': 'Where does Ana work?', 'answer': 'Acme Robotics', 'evidence': ['D1:1'], 'category': 4},
        {'question': 'When did Ben adopt his dog?', 'answer': '7 May 2023', 'evidence': ['D1:2'], 'category': 2},
        {'question': 'What would Ana and Ben likely do together in June?', 'answer': 'hiking', 'evidence': ['D1:3', 'D1:4'], 'category': 3},
        {'question': 'What did the dog Ben adopted chew?', 'answer': 'shoes', 'evidence': ['D1:2', 'D2:1'], 'category': 1},
        {'question': 'Which instrument does Ana play?', 'evidence': ['D2:3'], 'category': 5, 'adversarial_answer': 'violin'},
    ]
    return [{'sample_id': 'synthetic-0', 'conversation': conversation, 'qa': qa}]


@pytest.fixture(scope='module')
def bench_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the module: the LoCoMo benches after the first reuse its ingest of the synthetic conversation."""
    return tmp_path_factory.mktemp('bench-cache')


@pytest.fixture(scope='module')
def locomo_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp('locomo') / 'synthetic-locomo.json'
    path.write_text(json.dumps(synthetic_locomo()))
    return path


def run_bench(script: str, args: list[str], cache: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(('AGENT_MEMORY_', 'POWERTOOLS_'))}
    env.update(PYTHONPATH=os.pathsep.join(['shared', 'infra', '.']), AGENT_MEMORY_BENCH_CACHE=str(cache))
    command = [sys.executable, str(BENCH / script), *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False)


@pytest.mark.parametrize(('script', 'args', 'expected'), CASES, ids=[case[0] for case in CASES])
def test_the_bench_runs_on_tiny_inputs_and_prints_its_table(
    script: str, args: str, expected: list[str], bench_cache: Path, locomo_file: Path
) -> None:
    # Given a bench and tiny inputs, When it runs as `make bench-*` runs it, Then it exits 0 and prints its report
    result = run_bench(script, [str(locomo_file) if a == '{locomo}' else a for a in args.split()], bench_cache)
    assert result.returncode == 0, f'{script} exited {result.returncode}:\n{result.stderr[-3000:]}'
    missing = [text for text in expected if text not in result.stdout]
    assert not missing, f'{script} printed no {missing}:\n{result.stdout[-3000:]}'


def test_every_bench_script_is_smoke_tested_or_a_helper() -> None:
    # Given the scripts in bench/, When they are listed, Then each has a case above or is a helper the cases import
    scripts = {p.name for p in BENCH.glob('*.py')}
    uncovered = scripts - {case[0] for case in CASES} - HELPERS - ELSEWHERE
    assert not uncovered, f'add a smoke case (CASES) for {sorted(uncovered)}, or delete the script'
    assert {case[0] for case in CASES} <= scripts, 'a smoke case names a script that is gone'


def test_every_bench_script_has_a_make_target() -> None:
    # Given the Makefile, When its bench-* recipes are read, Then every bench script (not the helpers) is run by one
    makefile = (ROOT / 'Makefile').read_text()
    run = set(re.findall(r'bench/(\w+\.py)', '\n'.join(line for line in makefile.splitlines() if line.startswith('\t'))))
    unwired = {p.name for p in BENCH.glob('*.py')} - HELPERS - ELSEWHERE - run
    assert not unwired, f'no make bench-* target runs {sorted(unwired)}'
