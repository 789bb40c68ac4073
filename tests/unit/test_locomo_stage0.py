"""Stage 0 on real conversation (LoCoMo dev split, read from beside the repository; skipped where it is absent).

Two humans chatting: no instruction may come out of it, and the attributes stage 0 stores are checked against the
hand-labelled sample in ``tests/extraction_corpus/locomo_labels.json`` (ids and values only: LoCoMo is CC BY-NC,
never copied here). Conversations 0–2 are the tuning set held to the targets; 3–4 are the blind check, reported by
``bench/locomo_stage0.py --labels`` and not asserted here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'bench'))

import locomo_stage0 as locomo  # noqa: E402

DATA = next((p for p in locomo.DATA_CANDIDATES if p.exists()), None)
TUNING = [0, 1, 2]
pytestmark = pytest.mark.skipif(DATA is None, reason='LoCoMo dev split not present beside the repository')


@pytest.fixture(scope='module')
def stored() -> tuple[list[locomo.Stored], dict[int, list[str]]]:
    assert DATA is not None
    return locomo.stored_attributes(locomo.load(DATA), TUNING)


def test_two_people_chatting_give_no_instructions(stored: tuple[list[locomo.Stored], dict[int, list[str]]]) -> None:
    # Given the LoCoMo dev conversations (two people chatting) stored through stage 0, When their instructions are
    # listed, Then there are none
    _, instructions = stored
    assert {i: lines for i, lines in instructions.items() if lines} == {}


def test_stored_attributes_are_at_least_90_percent_correct(stored: tuple[list[locomo.Stored], dict[int, list[str]]]) -> None:
    # Given the same stored conversations, When their attributes are checked against the labels, Then every one is
    # labelled and at least 90 % are correct
    correct, wrong, unlabelled, wrong_items = locomo.precision_against_labels(stored[0])
    assert unlabelled == 0, 'new attributes: label them in tests/extraction_corpus/locomo_labels.json'
    assert correct >= 15 and correct / (correct + wrong) >= 0.9, wrong_items
