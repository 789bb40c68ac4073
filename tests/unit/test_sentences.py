"""Sentence splitting for stage 0 (extraction/stage0/sentences.py): never inside an abbreviation, an initial, a decimal,
an e-mail address or a URL; chat's lowercase sentences and newlines still end sentences."""

from __future__ import annotations

import pytest

from agent_memory.extraction.stage0.sentences import split_sentences


@pytest.mark.parametrize(
    ('text', 'expected'),
    [
        ("I'm a nurse at St. Mary's Hospital in Leeds. I love it.", ["I'm a nurse at St. Mary's Hospital in Leeds.", 'I love it.']),
        ('I work at J.P. Morgan now. Dr. Patel is my boss.', ['I work at J.P. Morgan now.', 'Dr. Patel is my boss.']),
        ('Prof. J. R. Tamsett of Carradine College wrote it.', ['Prof. J. R. Tamsett of Carradine College wrote it.']),
        (
            'We moved to the U.S. office, e.g. the one on 5th Ave. in N.Y. last year.',
            ['We moved to the U.S. office, e.g. the one on 5th Ave. in N.Y. last year.'],
        ),
        (
            'It weighs 4.5 kg. Mail me at a.b@example.co.uk. See https://x.example/a.b?c=1 for more.',
            ['It weighs 4.5 kg.', 'Mail me at a.b@example.co.uk.', 'See https://x.example/a.b?c=1 for more.'],
        ),
        ('Meet at 3.30 or 5:45 p.m. tomorrow... so yeah.', ['Meet at 3.30 or 5:45 p.m. tomorrow... so yeah.']),
        ('first line\nsecond line', ['first line', 'second line']),
    ],
)
def test_sentences_end_where_the_speaker_ended_them(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_a_lowercase_word_after_a_full_stop_opens_a_sentence_unless_an_abbreviation_ends_there() -> None:
    # Given chat typed in lowercase (the first person already given its capital by normalisation)
    text = 'ok so I moved. we live in port ellery now. lol'
    # Then each ". " before a lowercase word ends a sentence, in a turn with capitals too
    assert split_sentences(text, caseless=True) == ['ok so I moved.', 'we live in port ellery now.', 'lol']
    assert split_sentences('live in Dunmarsh. flatmate is Ines.') == ['live in Dunmarsh.', 'flatmate is Ines.']
    # But not after an abbreviation or a short capitalised word, in a turn with capitals
    assert split_sentences('We met at the Intl. school in Dr. Lee’s street.') == ['We met at the Intl. school in Dr. Lee’s street.']


def test_a_long_run_without_spaces_is_split_only_at_window_edges() -> None:
    # Given 20 KB of "!?" with no space (the library is quadratic inside such runs), Then it is not cut at each of its
    # 20,000 terminators: a handful of pieces around the window edges that bound the work
    pieces = split_sentences('!?' * 10_000)
    assert len(pieces) <= 8 and sum(map(len, pieces)) >= 19_990
