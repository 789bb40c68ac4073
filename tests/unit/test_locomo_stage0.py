"""Stage 0 on real conversation (LoCoMo dev split, read from beside the repository). Where the split is absent the
module is skipped with the reason shown, except in CI (``.ci/run`` sets ``AGENT_MEMORY_LOCOMO_REQUIRED=1``), where that is
a failure: the data going missing must not turn the check off silently.

Two humans chatting: no instruction may come out of it, first person is bound to whoever speaks, and every attribute
stage 0 stores is checked against the hand labels in ``tests/extraction_corpus/locomo_labels.json`` (ids and values
only: LoCoMo is CC BY-NC, never copied here). All five dev conversations are held to the targets (they were all looked
at while tuning); ``bench/locomo_stage0.py --labels`` prints the same numbers.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'bench'))

import locomo_stage0 as locomo  # noqa: E402

DATA = next((p for p in locomo.DATA_CANDIDATES if p.exists()), None)
DEV = [0, 1, 2, 3, 4]
if DATA is None:
    absent = f'LoCoMo dev split not found at any of {[str(p) for p in locomo.DATA_CANDIDATES]}'
    if os.environ.get('AGENT_MEMORY_LOCOMO_REQUIRED') == '1':
        pytest.fail(f'{absent} (AGENT_MEMORY_LOCOMO_REQUIRED=1)', pytrace=False)
    pytest.skip(absent, allow_module_level=True)
Stored = tuple[list[locomo.Stored], dict[int, list[str]]]


@pytest.fixture(scope='module')
def stored() -> Stored:
    assert DATA is not None
    return locomo.stored_attributes(locomo.load(DATA), DEV)


def test_two_people_chatting_give_no_instructions(stored: Stored) -> None:
    # Given the LoCoMo dev conversations (two people chatting) stored through stage 0, When their instructions are
    # listed, Then there are none
    _, instructions = stored
    assert {i: lines for i, lines in instructions.items() if lines} == {}


def test_every_stored_attribute_is_labelled_and_at_least_90_percent_correct(stored: Stored) -> None:
    # Given the same stored conversations, When every stored attribute is checked against the labels, Then each is
    # judged and at least 90 % are correct
    correct, wrong, unlabelled, wrong_items = locomo.precision_against_labels(stored[0])
    assert unlabelled == 0, 'new attributes: judge them in tests/extraction_corpus/locomo_labels.json'
    assert correct + wrong >= locomo.SAMPLE_SIZE
    assert correct / (correct + wrong) >= 0.9, wrong_items


def test_a_seeded_random_sample_of_100_is_at_least_90_percent_correct(stored: Stored) -> None:
    # Given a seeded random sample of 100 stored attributes, When checked against the labels, Then at least 90 % are
    # correct
    sample = locomo.seeded_sample(stored[0])
    correct, wrong, unlabelled, wrong_items = locomo.precision_against_labels(sample)
    assert (len(sample), unlabelled) == (100, 0)
    assert correct / (correct + wrong) >= 0.9, wrong_items


def test_first_person_is_bound_to_the_speaker(stored: Stored) -> None:
    # Given the stored attributes and each turn's speaker, When they are compared, Then every first-person fact landed
    # on its speaker: none on 'self' or on the other speaker (a pet or relative they name has facts of its own)
    assert DATA is not None
    turns = locomo.turns(locomo.load(DATA), DEV)
    speakers = {(t.conversation, t.dia_id): t.speaker for t in turns}
    people = {(t.conversation, t.speaker) for t in turns} | {(c, 'self') for c in DEV}
    elsewhere = [a for a in stored[0] if a[2] != speakers[(a[0], a[1])] and (a[0], a[2]) in people]
    assert elsewhere == []
