"""Stage 0, the deterministic extractor: one focused test group per case family (CONTRACT §6.2, §6.4, §6.5)."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from agent_memory.extraction.deterministic import MAX_SENTENCES, extract
from agent_memory.extraction.model import (
    EntityRef,
    ExtractedAttribute,
    ExtractedUncertainty,
    Extraction,
    ExtractionContext,
    Invalidation,
    KnownEntity,
    PriorTurn,
)
from agent_memory.extraction.stage0.reading import MAX_CLAUSES

ME = EntityRef.me()
WEDNESDAY = dt.datetime(2024, 6, 12, 15, 0, tzinfo=dt.UTC)  # 2024-06-12 is a Wednesday
TEAM = (('person', 'Alice Chen'), ('person', 'Bob Martin'), ('organisation', 'Acme'), ('project', 'Apollo'))


def run(
    text: str,
    role: str = 'user',
    at: dt.datetime = WEDNESDAY,
    known: tuple[tuple[str, str], ...] = (),
    open_: tuple[ExtractedUncertainty, ...] = (),
    recent: tuple[PriorTurn, ...] = (),
) -> Extraction:
    ctx = ExtractionContext(
        role=role,
        observed_at=at,
        known_entities=tuple(KnownEntity(type=t, name=n) for t, n in known),
        open_uncertainties=open_,
        recent_turns=recent,
    )
    return extract(text, ctx)


def facts(result: Extraction) -> set[tuple[str, str, str]]:
    return {(a.entity.name, a.key, a.value) for a in result.attributes}


def only(result: Extraction, key: str) -> ExtractedAttribute:
    (attribute,) = [a for a in result.attributes if a.key == key]
    return attribute


def day(value: dt.datetime | None) -> str | None:
    return value.date().isoformat() if value else None


class TestInstructions:
    @pytest.mark.parametrize(
        ('text', 'description', 'label'),
        [
            ('Always respond in bullet points.', 'Always respond in bullet points', 'format'),
            ('Never use technical jargon.', 'Never use technical jargon', 'style'),
            ('From now on, please label sarcasm.', 'Label sarcasm', 'style'),
            ('Stop using bullet points.', 'Stop using bullet points', 'format'),
            ("Don't use emojis in your replies.", "Don't use emojis in your replies", 'style'),
            ('Keep responses under three sentences.', 'Keep responses under three sentences', 'length'),
            ('Please respond in German.', 'Respond in German', 'language'),
            ('Use a warm, friendly tone with me.', 'Use a warm, friendly tone with me', 'tone'),
            ('Going forward, cite your sources.', 'Cite your sources', 'cite-sources'),
            ('If I ask for code, always use Python.', 'If I ask for code, always use Python', 'use-python'),
        ],
    )
    def test_cues_give_a_cleaned_description_and_a_topic_label(self, text: str, description: str, label: str) -> None:
        # Given a user directive cue, When stage 0 reads it, Then the instruction has the cleaned description and its
        # topic label
        (instruction,) = run(text).instructions
        assert (instruction.description, instruction.label) == (description, label)

    def test_a_restatement_is_identical_modulo_case_so_the_reconciler_merges_it(self) -> None:
        # Given a directive restated in other case, When both are read, Then they give the same (label, description) key
        # so the reconciler merges them
        variants = [
            'Always respond in bullet points.',
            'please ALWAYS respond in bullet points!',
            'From now on, always respond in bullet points',
        ]
        keys = {(i.label.casefold(), i.description.casefold()) for v in variants for i in run(v).instructions}
        assert keys == {('format', 'always respond in bullet points')}

    def test_a_reversal_is_a_new_instruction_on_the_same_topic(self) -> None:
        # Given a directive and its reversal, When both are read, Then the reversal is a different instruction under the
        # same label
        (first,) = run('Always respond in bullet points.').instructions
        (reversal,) = run('Stop using bullet points.').instructions
        assert reversal.label == first.label
        assert reversal.description.casefold() != first.description.casefold()

    def test_several_directives_in_one_turn(self) -> None:
        # Given two directives in one turn, When it is read, Then both instructions come out in order
        result = run('Always answer in British English. Never reveal internal tool names.', role='system')
        assert [i.label for i in result.instructions] == ['language', 'reveal-internal']

    @pytest.mark.parametrize('role', ['assistant', 'tool'])
    def test_untrusted_roles_never_yield_instructions(self, role: str) -> None:
        # Given directive text in an assistant or tool turn, When it is read, Then nothing is extracted
        assert run("Understood — I'll always respond in bullet points from now on. Never use jargon.", role=role) == Extraction()

    def test_system_turns_give_instructions_but_no_facts(self) -> None:
        # Given a system turn with a directive and a fact-like phrase, When it is read, Then only the instruction comes
        # out
        result = run("I'm the CTO at Acme. Always be concise.", role='system')
        assert result.attributes == () and len(result.instructions) == 1

    @pytest.mark.parametrize(
        'text',
        [
            "Don't worry, it's not urgent.",
            'Never mind, I figured it out.',
            'Stop.',
            'Use the staging server for this deploy.',
            'Sure, because rebooting always fixes everything.',
            'Call me back when the report is ready.',
        ],
    )
    def test_directive_lookalikes_are_not_instructions(self, text: str) -> None:
        # Given a sentence that looks like a directive but is not one to the assistant, When it is read, Then no
        # instruction comes out
        assert run(text).instructions == ()

    @pytest.mark.parametrize(
        'text',
        [
            "Keep it up, you're doing amazing work!",
            'Keep going, the hard part is behind you.',
            'Never give up on your dreams.',
            "Don't give up, friend.",
            "Don't forget to take care of yourself this week.",
            "Don't let the critics get to you.",
            "Don't be afraid to ask your mentor for help.",
            'Always here for you if you need to talk.',
            'Never had the chance to go there myself.',
            "Don't quit now, you're so close.",
            # LoCoMo: proverbs, states and encouragement that opened with a cue word
            'Never say never!',
            'Always up for something sweet.',
            'Always staying filled with self-belief.',
            "Don't ever quit on what you love.",
        ],
    )
    def test_encouragement_between_people_is_not_an_instruction(self, text: str) -> None:
        # Given encouragement between people, When it is read, Then no instruction comes out
        assert run(text).instructions == ()

    @pytest.mark.parametrize(
        ('text', 'label'),
        [
            ('Keep it short.', 'length'),
            ('Keep them brief and to the point.', 'length'),
            ("Don't be so formal with me.", 'tone'),
            ('Never be verbose.', 'length'),
            ("Don't give me long answers.", 'length'),
            ('Never ever use emojis.', 'style'),
            ("Don't ever use bullet points.", 'format'),
            ('Always bring up the budget first, from now on.', 'bring-up'),
        ],
    )
    def test_directives_to_the_assistant_still_are(self, text: str, label: str) -> None:
        # Given a directive to the assistant near those lookalikes, When it is read, Then it is an instruction with its
        # label
        (instruction,) = run(text).instructions
        assert instruction.label == label

    def test_call_me_is_a_preferred_name_not_an_instruction(self) -> None:
        # Given 'call me Maggie', When it is read, Then it is a preferred name, not an instruction
        result = run('Please call me Maggie.')
        assert result.instructions == ()
        assert facts(result) == {('self', 'preferred_name', 'Maggie')}

    def test_keep_it_after_a_request_for_an_artefact_is_about_that_artefact(self) -> None:
        # Given 'keep it under 100 words' after a request for an artefact, When it is read, Then it is not a standing
        # instruction (alone, it is)
        request = PriorTurn(role='user', content='Could you write me a short announcement?', observed_at=WEDNESDAY)
        assert run('Keep it under 100 words.', recent=(request,)).instructions == ()
        assert len(run('Keep it under 100 words.').instructions) == 1


class TestIdentity:
    @pytest.mark.parametrize(
        ('text', 'expected'),
        [
            ("I'm Sam.", {('self', 'name', 'Sam')}),
            ('My name is Sam Rivera.', {('self', 'name', 'Sam Rivera')}),
            ('You can call me Sam.', {('self', 'preferred_name', 'Sam')}),
            ("I'm the CTO.", {('self', 'occupation', 'CTO')}),
            ('I work as a data engineer.', {('self', 'occupation', 'data engineer')}),
            ('I speak German and French.', {('self', 'language', 'German'), ('self', 'language', 'French')}),
            ("I'm German.", {('self', 'nationality', 'German')}),
            ("I'm a UX designer based in Amsterdam.", {('self', 'occupation', 'UX designer'), ('self', 'location', 'Amsterdam')}),
            (
                "I'm Sam, a data engineer at Acme.",
                {('self', 'name', 'Sam'), ('self', 'occupation', 'data engineer'), ('self', 'employer', 'Acme')},
            ),
        ],
    )
    def test_first_person_identity(self, text: str, expected: set[tuple[str, str, str]]) -> None:
        # Given a first-person identity statement, When it is read, Then the expected self facts come out, all identity
        result = run(text)
        assert facts(result) == expected
        assert all(a.category == 'identity' for a in result.attributes)

    def test_employer_is_an_attribute_and_a_works_at_relation(self) -> None:
        # Given 'I work at Acme Robotics', When it is read, Then an employer attribute and a works_at relation come out
        result = run('I work at Acme Robotics.')
        assert facts(result) == {('self', 'employer', 'Acme Robotics')}
        (relation,) = result.relations
        assert (relation.subject, relation.label, relation.object) == (ME, 'works_at', EntityRef(type='organisation', name='Acme Robotics'))

    @pytest.mark.parametrize('text', ['I live in Berlin.', "I'm based in Berlin."])
    def test_location_is_an_attribute_and_a_lives_in_relation(self, text: str) -> None:
        # Given a statement of where the speaker lives, When it is read, Then a location attribute and a lives_in
        # relation come out
        result = run(text)
        assert facts(result) == {('self', 'location', 'Berlin')}
        assert [(r.label, r.object) for r in result.relations] == [('lives_in', EntityRef(type='location', name='Berlin'))]

    def test_a_move_sets_the_new_location_from_the_move_date(self) -> None:
        # Given a move with its date, When it is read, Then the new location is valid from that date
        location = only(run('I moved to Paris last month.'), 'location')
        assert (location.value, day(location.valid_from)) == ('Paris', '2024-05-01')

    @pytest.mark.parametrize(
        'text', ["I'm tired.", "I'm so happy, it's almost the weekend.", "I'm going to grab a coffee.", "I'm German.", "I'm Happy to help."]
    )
    def test_moods_plans_and_nationalities_are_not_names(self, text: str) -> None:
        # Given 'I'm tired/going/French'-like statements, When they are read, Then no name attribute comes out
        assert not [a for a in run(text).attributes if a.key in ('name', 'preferred_name')]


class TestPreferences:
    @pytest.mark.parametrize(
        ('text', 'key', 'value'),
        [
            ('I prefer window seats.', 'preference', 'window seats'),
            ('I really love Italian food.', 'likes', 'Italian food'),
            ("I'm a huge fan of dark mode.", 'likes', 'dark mode'),
            ("I can't stand cilantro.", 'dislikes', 'cilantro'),
            ('I hate early meetings.', 'dislikes', 'early meetings'),
            ("I'm not a big fan of horror movies.", 'dislikes', 'horror movies'),
        ],
    )
    def test_preference_keys(self, text: str, key: str, value: str) -> None:
        # Given a preference statement, When it is read, Then it lands under its preference key with the value
        assert facts(run(text)) == {('self', key, value)}

    @pytest.mark.parametrize(
        'text', ["I'd like a table for two.", 'I love it!', 'Do you like jazz?', 'My friend told me he loves the Pro plan.']
    )
    def test_requests_pronouns_questions_and_reports_are_not_preferences(self, text: str) -> None:
        # Given requests, pronouns, questions and reports that use 'like'/'love', When read, Then no preference comes
        # out
        assert run(text).attributes == ()

    @pytest.mark.parametrize(
        'text',
        [
            'Yeah, I love to.',  # "likes: to"
            'I love the calm it gives me.',  # what "it" is was said in another sentence
            'I really like that.',
            'I love the thought Nate!',  # the "likes: thought Nate"
        ],
    )
    def test_fragments_are_not_values(self, text: str) -> None:
        # Given a preference verb followed by a fragment, When read, Then no attribute comes out
        assert run(text).attributes == ()

    @pytest.mark.parametrize('text', ["Wow, that's stunning! I love the colours.", 'Aww, so cute! We really love the little hat.'])
    def test_i_love_the_after_a_compliment_is_a_reaction_not_a_preference(self, text: str) -> None:
        # Given 'I love the ...' reacting to a compliment, When read, Then no preference comes out
        assert run(text).attributes == ()

    def test_i_love_the_without_a_compliment_is_still_a_preference(self) -> None:
        # Given 'I love the new search feature' with no compliment, When read, Then it is a liked value
        assert facts(run('Thanks! I love the new search feature.')) == {('self', 'likes', 'new search feature')}

    @pytest.mark.parametrize(
        ('text', 'value'),
        [
            ('I like to just watch the sunset- it calms me down.', 'watch the sunset'),
            ("I'm a fan of both jazz and blues.", 'jazz and blues'),
            ('I love hiking—especially in autumn.', 'hiking'),
        ],
    )
    def test_a_liked_value_ends_at_its_phrase(self, text: str, value: str) -> None:
        # Given a liked thing followed by more clause, When read, Then the value ends where its phrase ends
        assert facts(run(text)) == {('self', 'likes', value)}


class TestConversationalPreferences:
    """How people state lasting preferences and pursuits in conversation (shapes found in LoCoMo's dev split)."""

    @pytest.mark.parametrize(
        ('text', 'key', 'value'),
        [
            ("I'm passionate about helping people and making a positive impact.", 'likes', 'helping people and making a positive impact'),
            ("I've always been passionate about veterans and their rights.", 'likes', 'veterans and their rights'),
            ("I've been into dancing since I was a kid and it's been my passion.", 'likes', 'dancing'),
            ("I'm all about dramas and romcoms.", 'likes', 'dramas and romcoms'),
            ("I've always had a love for horses!", 'likes', 'horses'),
            ("I've always liked turtles since I was a boy, so I know all about them!", 'likes', 'turtles'),
            ('I will always love reading, personally.', 'likes', 'reading'),
            ('Harry Potter is my favorite book.', 'favorite_book', 'Harry Potter'),
            ('Dance is my passion, and I will keep working hard!', 'likes', 'Dance'),
            ('The Hobbit is one of my favorites too.', 'likes', 'The Hobbit'),
            ('Spider-Man has always been a favorite of mine.', 'likes', 'Spider-Man'),
            ('My favorite is the chocolate cake.', 'likes', 'chocolate cake'),
            ("That's why I love volunteering!", 'likes', 'volunteering'),
            ('It reminds me why I love being a mom.', 'likes', 'being a mom'),
            ('You know I love live music.', 'likes', 'live music'),
            ('What can I say, I love turtles.', 'likes', 'turtles'),
            ('Maybe! I do like nature, so that might be fun going with someone else.', 'likes', 'nature'),
            ("I'm keen on counseling or working in mental health - I'd love to help.", 'likes', 'counseling or working in mental health'),
            ("I'm obsessed with board games.", 'likes', 'board games'),
            ("I thought it'd be perfect since I love fantasy.", 'likes', 'fantasy'),
            ("I'm starting a dance studio 'cause I'm passionate about dancing and it'd be great to share it.", 'likes', 'dancing'),
            ("Yeah, since I'm lactose intolerant I'm trying out dairy-free options.", 'diet', 'lactose intolerant'),
            ('Yeah, I play clarinet!', 'plays', 'clarinet'),
            ('I usually play CS:GO, but I tried Street Fighter this time.', 'plays', 'CS:GO'),
            ('My goal is to improve my shooting percentage.', 'goal', 'improve my shooting percentage'),
            ('My dream is to create a safe and loving home for kids.', 'dream', 'create a safe and loving home for kids'),
        ],
    )
    def test_conversational_shapes(self, text: str, key: str, value: str) -> None:
        # Given a conversational way of stating a lasting preference or pursuit, When read, Then exactly that key and
        # value come out about the speaker
        assert facts(run(text)) == {('self', key, value)}

    @pytest.mark.parametrize(
        'text',
        [
            "It's my favorite and never gets old.",
            'Yes, they are still my favorites.',
            'Seeing my characters come alive was my favorite part.',
            "I'm really enjoying my new job.",  # a present experience, not a lasting preference
            'I play with my kids every evening.',
            'I play a lot these days.',
            'My aim was to show warmth, love and self-acceptance.',
            "That's why I love them.",
            "I'm keen to try your recipe.",
            "I'm obsessed with this show!",
            "I'm keen on that idea.",
            'This is my favorite!',
            'Which one is your favorite?',
        ],
    )
    def test_lookalikes_state_nothing(self, text: str) -> None:
        # Given a sentence shaped like a conversational preference but stating none, When read, Then no attribute comes
        # out
        assert run(text).attributes == ()

    @pytest.mark.parametrize(
        'text',
        [
            'I love the energy, diversity, and awesome food of this city.',
            'A few times. I really like the idea and the acting.',
            "I like the structure of the language, it's much easier.",
            'Wow, looks great! Where did you take this picture? I love the dark sky and green scenery.',
        ],
    )
    def test_a_quality_of_something_named_elsewhere_is_a_reaction(self, text: str) -> None:
        # Given praise of a quality of something named elsewhere, When read, Then it is a reaction, not a preference
        assert run(text).attributes == ()

    def test_a_generic_the_is_still_a_preference(self) -> None:
        # Given 'I love the ocean', When read, Then the ocean is liked
        assert facts(run('I love the ocean.')) == {('self', 'likes', 'ocean')}


class TestPursuits:
    @pytest.mark.parametrize(
        ('text', 'key', 'value'),
        [
            ("I've been working on supporting youth sports.", 'working_on', 'supporting youth sports'),
            (
                "Oh, and btw - I've been working hard on my online store and just teamed up with a local artist.",
                'working_on',
                'my online store',
            ),
            ('I\'m currently reading "The Lean Startup" and hoping it helps.', 'reading', 'The Lean Startup'),
            ("I've been volunteering at a homeless shelter and it's really rewarding.", 'volunteering', 'homeless shelter'),
            ("I'm volunteering as a mentor for a local school.", 'volunteering', 'mentor for a local school'),
        ],
    )
    def test_what_someone_is_doing_these_days(self, text: str, key: str, value: str) -> None:
        # Given what the speaker is doing these days, When read, Then it is a context attribute under its key
        result = run(text)
        assert facts(result) == {('self', key, value)}
        assert only(result, key).category == 'context'

    @pytest.mark.parametrize(
        'text',
        [
            "Hey Nate! Apart from meetings, I'm working on a project - challenging but fulfilling.",
            "Hey Nate, I'm working on a new project - a suspenseful thriller set in a small town.",
            'I\'m working on one with my group called "Finding Home." It\'s a script about a girl on a journey.',
            "Anyway, I've been working on something exciting too.",
            "I'm reading a fantasy book that really captivates me.",
        ],
    )
    def test_vague_pursuits_are_not_values(self, text: str) -> None:
        # Given a vague pursuit, When read, Then no attribute comes out
        assert run(text).attributes == ()


class TestPlansAndKeyValues:
    def test_plan_membership(self) -> None:
        # Given 'I'm on the Free plan', When read, Then the plan is Free, as knowledge
        plan = only(run("I'm on the Free plan right now."), 'plan')
        assert (plan.value, plan.category) == ('Free', 'knowledge')

    def test_a_change_emits_the_new_value_dated_by_the_change(self) -> None:
        # Given a dated plan change, When read, Then only the new plan comes out, valid from the change
        result = run('Last Friday I downgraded from Business to Team.')
        assert facts(result) == {('self', 'plan', 'Team')}
        assert day(only(result, 'plan').valid_from) == '2024-06-07'

    @pytest.mark.parametrize(
        ('text', 'key', 'value'),
        [
            ('My budget is $500 a month.', 'budget', '$500 a month'),
            ('My favourite colour is blue.', 'favourite_colour', 'blue'),
            ('My seat count is 12.', 'seat_count', '12'),
            ('My plan is Team now.', 'plan', 'Team'),
            ('Our billing email changed to finance@helio.io.', 'billing_email', 'finance@helio.io'),
            ('My birthday is March 3rd.', 'birthday', 'March 3rd'),
            ('My pronouns are she/her.', 'pronouns', 'she/her'),
            ("I'm 34.", 'age', '34'),
            ("I'm vegetarian.", 'diet', 'vegetarian'),
            ("I'm allergic to shellfish.", 'allergy', 'shellfish'),
        ],
    )
    def test_my_key_is_value(self, text: str, key: str, value: str) -> None:
        # Given 'my <key> is <value>', When read, Then that key and value come out
        assert facts(run(text)) == {('self', key, value)}

    @pytest.mark.parametrize(
        'text',
        [
            'My English is decent.',
            'My question is whether it scales.',
            'My flight is delayed.',
            'If I were on the Pro plan, would I get priority support?',
            'I wish I worked at a company with better snacks.',
        ],
    )
    def test_opinions_states_and_hypotheticals_are_not_key_values(self, text: str) -> None:
        # Given opinions, states and hypotheticals in that shape, When read, Then no attribute comes out
        assert run(text).attributes == ()


class TestNegation:
    @pytest.mark.parametrize(
        ('text', 'key', 'value'),
        [
            ('I no longer work at Acme.', 'employer', 'Acme'),
            ("I don't live in Berlin anymore.", 'location', 'Berlin'),
            ("I'm not on the Pro plan anymore.", 'plan', 'Pro'),
            ("I'm no longer the team lead.", 'occupation', 'team lead'),
            ('I cancelled my subscription.', 'plan', None),
        ],
    )
    def test_explicit_negation_is_an_invalidation_not_an_attribute(self, text: str, key: str, value: str | None) -> None:
        # Given an explicit negation of a fact, When read, Then it is an invalidation of that key (and value) and no
        # attribute
        result = run(text)
        assert result.invalidations == (Invalidation(entity=ME, key=key, value=value),)
        assert result.attributes == ()

    def test_not_sure_is_not_a_negated_title(self) -> None:
        # Given 'I'm not sure what you mean', When read, Then nothing comes out
        assert run("I'm not sure what you mean.") == Extraction()


class TestSelfCorrections:
    def test_an_in_sentence_correction_gives_an_uncertainty_and_a_tentative_value(self) -> None:
        # Given a correction inside one sentence, When read, Then a self-correction uncertainty and a tentative value
        # below the reconciliation floor come out
        result = run("I'm CEO — well, co-CEO, it's complicated.")
        (uncertainty,) = result.uncertainties
        assert (uncertainty.kind, uncertainty.entity, uncertainty.key) == ('self_correction', ME, 'occupation')
        (title,) = result.attributes
        assert (title.value, title.tentative) == ('co-CEO', True)
        assert title.confidence < 0.7  # below the reconciliation floor: it cannot silently supersede

    def test_a_correction_in_the_next_sentence(self) -> None:
        # Given a correction in the following sentence, When read, Then the corrected value is tentative with a
        # self-correction uncertainty
        result = run("I'm CEO. Well, co-CEO.")
        assert [(a.value, a.tentative) for a in result.attributes] == [('co-CEO', True)]
        assert [u.kind for u in result.uncertainties] == ['self_correction']

    def test_a_tentative_employer_draws_no_relation(self) -> None:
        # Given a corrected (tentative) employer, When read, Then no works_at relation is drawn
        result = run('I work at Fintrack, I mean Finlytics, sorry.')
        assert [(a.value, a.tentative) for a in result.attributes] == [('Finlytics', True)]
        assert result.relations == ()

    def test_well_without_a_competing_value_is_not_a_correction(self) -> None:
        # Given 'well' with no competing value, When read, Then no uncertainty comes out
        assert run("I'm so happy, well, almost.").uncertainties == ()

    @pytest.mark.parametrize(
        ('text', 'key', 'value'),
        [
            ("So I'm the head of design at this point; no wait, design director.", 'occupation', 'design director'),
            ("These days I'm based in Porto (well, technically Matosinhos).", 'location', 'Matosinhos'),
            ("I'm on the Basic plan: sorry, the Plus plan.", 'plan', 'Plus'),
            ('Honestly I think I live in Leeds now, or rather Bradford.', 'location', 'Bradford'),
            ("I'm a product manager... no, a product owner, to be precise.", 'occupation', 'product owner'),
        ],
    )
    def test_corrections_phrased_otherwise_give_an_uncertainty_and_a_tentative_value(self, text: str, key: str, value: str) -> None:
        # Given a correction phrased another way, When read, Then a self-correction uncertainty and a tentative value
        # come out
        result = run(text)
        assert [(u.kind, u.key) for u in result.uncertainties] == [('self_correction', key)]
        assert [(a.key, a.value, a.tentative) for a in result.attributes] == [(key, value, True)]


class TestReferences:
    def test_a_pronoun_with_several_people_in_scope_is_an_ambiguous_reference(self) -> None:
        # Given 'he' with several known people, When read, Then it is an ambiguous reference and nothing is attributed
        result = run('He said the deadline moved to Friday.', known=TEAM)
        assert [u.kind for u in result.uncertainties] == ['ambiguous_reference']
        assert result.attributes == () and result.actions == ()

    def test_my_manager_with_several_people_in_scope(self) -> None:
        # Given 'my manager' with several known people, When read, Then it is an ambiguous reference
        assert [u.kind for u in run('My manager approved the budget.', known=TEAM).uncertainties] == ['ambiguous_reference']

    @pytest.mark.parametrize('known', [(('person', 'Alice Chen'),), TEAM[2:]], ids=['one-person', 'no-person'])
    def test_no_ambiguity_without_several_candidates(self, known: tuple[tuple[str, str], ...]) -> None:
        # Given 'he' with fewer than two candidates, When read, Then no ambiguity is recorded
        assert run('He said the deadline moved to Friday.', known=known).uncertainties == ()

    def test_no_ambiguity_when_the_turn_names_someone(self) -> None:
        # Given a turn that names Bob before 'he', When read, Then no ambiguity is recorded
        assert run('Bob called. He said the deadline moved.', known=TEAM).uncertainties == ()

    @pytest.mark.parametrize(
        ('text', 'expected'),
        [
            ("Alice Chen's title is VP of Engineering.", {('Alice Chen', 'occupation', 'VP of Engineering')}),
            ('Alice lives in Rome.', {('Alice Chen', 'location', 'Rome')}),
            ('Acme is based in Berlin.', {('Acme', 'location', 'Berlin')}),
            ('Bob is on the Pro plan.', {('Bob Martin', 'plan', 'Pro')}),
        ],
    )
    def test_facts_about_a_named_known_entity(self, text: str, expected: set[tuple[str, str, str]]) -> None:
        # Given a statement about a named known entity, When read, Then the facts land on that entity
        assert facts(run(text, known=TEAM)) == expected

    def test_an_organisation_is_located_in_rather_than_living_in(self) -> None:
        # Given 'Acme is based in Berlin', When read, Then the relation is located_in
        assert [r.label for r in run('Acme is based in Berlin.', known=TEAM).relations] == ['located_in']

    def test_joining_a_known_project_is_a_works_on_link_not_an_employer(self) -> None:
        # Given Bob joining a known project as tech lead, When read, Then he gets a title and a works_on link, not an
        # employer
        result = run('Bob joined Apollo as tech lead.', known=TEAM)
        assert facts(result) == {('Bob Martin', 'occupation', 'tech lead')}
        assert [(r.label, r.object.type) for r in result.relations] == [('works_on', 'project')]


class TestTemporal:
    @pytest.mark.parametrize(
        ('text', 'expected'),
        [
            ('I booked a flight yesterday.', '2024-06-11'),
            ('I booked a flight the day before yesterday.', '2024-06-10'),
            ('I booked a flight three days ago.', '2024-06-09'),
            ('I booked a flight last week.', '2024-06-03'),
            ('I booked a flight last month.', '2024-05-01'),
            ('I booked a flight last Friday.', '2024-06-07'),
            ('I booked a flight on March 3rd.', '2024-03-03'),
            ('I booked a flight on 3 March 2023.', '2023-03-03'),
            ('I booked a flight on 2024-01-15.', '2024-01-15'),
            ('I booked a flight this morning.', '2024-06-12'),
            ("I'm presenting the roadmap next Monday.", '2024-06-17'),
            ("I'll send the invoice in two days.", '2024-06-14'),
            ("I'm flying to Tokyo on the 28th.", '2024-06-28'),
            ('I signed the lease on the 3rd.', '2024-06-03'),
            ('We launch on December 1st.', None),  # present simple without a scheduling form: not an action
        ],
    )
    def test_relative_dates_resolve_against_observed_at(self, text: str, expected: str | None) -> None:
        # Given a relative date in an action, When read with the turn's observed time, Then it resolves to the expected
        # day (or none)
        actions = run(text).actions
        assert [day(a.occurred_at) for a in actions] == ([expected] if expected else [])

    def test_the_turns_own_timezone_decides_the_day(self) -> None:
        # Given a late-evening turn in its own timezone, When 'yesterday' is read, Then the day is computed in that
        # timezone
        late_evening = dt.datetime(2024, 6, 12, 23, 30, tzinfo=dt.timezone(dt.timedelta(hours=-7)))
        (action,) = run('I booked a flight yesterday.', at=late_evening).actions
        assert action.occurred_at == dt.datetime(2024, 6, 11, tzinfo=late_evening.tzinfo)

    def test_until_gives_valid_until(self) -> None:
        # Given 'until Friday', When read, Then the state is context, valid until that day
        status = only(run("I'm on vacation until Friday."), 'status')
        assert (status.value, status.category, day(status.valid_until)) == ('on vacation', 'context', '2024-06-14')

    def test_since_gives_valid_from(self) -> None:
        # Given 'since January', When read, Then the plan is valid from 1 January
        assert day(only(run("I've been on the Pro plan since January."), 'plan').valid_from) == '2024-01-01'

    def test_today_puts_no_date_on_a_state(self) -> None:
        # Given a state said 'today', When read, Then it carries no validity dates
        working = only(run("I'm working on the Q3 report today."), 'working_on')
        assert (working.valid_from, working.valid_until) == (None, None)

    @pytest.mark.parametrize(
        'text',
        [
            'I switched to the Pro plan a while ago.',
            'Someday I want to move to Japan.',
            "We'll launch the beta soon.",
            'Back when I was young I lived in Rome.',
            'I met Dana at a conference a few years ago.',
        ],
    )
    def test_unresolvable_times_are_uncertainties(self, text: str) -> None:
        # Given a vague time, When read, Then an unresolved-time uncertainty comes out and no date is guessed
        result = run(text)
        assert [u.kind for u in result.uncertainties] == ['unresolved_time']
        assert all(a.valid_from is None for a in result.attributes) and all(a.occurred_at is None for a in result.actions)

    @pytest.mark.parametrize(
        'text',
        [
            'I moved to Lisbon right after the wedding.',
            'I joined Globex after college.',
            'We switched to the Team plan before the merger.',
            'I started running during the lockdown.',
            'I sold my car when the kids were born.',
        ],
    )
    def test_times_anchored_to_an_undated_event_are_uncertainties_with_no_date(self, text: str) -> None:
        # Given a time anchored to an undated event, When read, Then the fact comes out undated with an unresolved-time
        # uncertainty
        result = run(text)
        assert [u.kind for u in result.uncertainties] == ['unresolved_time']
        assert result.attributes or result.actions
        assert all(a.valid_from is None for a in result.attributes) and all(a.occurred_at is None for a in result.actions)

    def test_small_talk_with_a_vague_time_is_nothing(self) -> None:
        # Given small talk with a vague time, When read, Then nothing comes out
        assert run('See you soon!') == Extraction()
        assert run("I'll get back to you soon.") == Extraction()


class TestSarcasm:
    @pytest.mark.parametrize(
        'text',
        [
            'Yeah right, I *love* Mondays.',
            'Oh great, another meeting about meetings.',
            'I love this new dashboard /s',
            'Sure, because that always works.',
        ],
    )
    def test_sarcasm_is_an_uncertainty_instead_of_a_preference(self, text: str) -> None:
        # Given a sarcastic 'I love ...', When read, Then it is a sarcasm uncertainty, not a preference or instruction
        result = run(text)
        assert [u.kind for u in result.uncertainties] == ['sarcasm']
        assert result.attributes == () and result.instructions == ()

    @pytest.mark.parametrize('text', ['I love Mondays, honestly.', 'Oh great, it finally works!', 'Great, thanks!'])
    def test_genuine_enthusiasm_is_not_sarcasm(self, text: str) -> None:
        # Given genuine enthusiasm, When read, Then no sarcasm is recorded
        assert run(text).uncertainties == ()


class TestActions:
    def test_a_past_event_with_its_date(self) -> None:
        # Given a past event with a relative date, When read, Then an action with actor, verb, object, day and summary
        # comes out
        (action,) = run('I booked a flight to Berlin yesterday.').actions
        assert (action.actor, action.verb, action.object_text, day(action.occurred_at)) == (ME, 'book', 'flight to Berlin', '2024-06-11')
        assert 'flight to Berlin' in action.summary

    def test_we_binds_to_the_speaker_and_a_known_entity_can_act(self) -> None:
        # Given 'we shipped' and a known person acting, When read, Then the actions bind to the speaker and to that
        # person
        assert [(a.actor, a.verb) for a in run('We shipped v2 last week.').actions] == [(ME, 'ship')]
        actor = EntityRef(type='person', name='Bob Martin')
        assert [(a.actor, a.verb) for a in run('Bob approved the budget.', known=TEAM).actions] == [(actor, 'approve')]

    @pytest.mark.parametrize(
        'text', ['We cancelled it.', 'I said the launch slipped.', "I'm going to grab a coffee.", 'I thought about it.', 'I need a break.']
    )
    def test_non_events(self, text: str) -> None:
        # Given sentences that are not events, When read, Then no action comes out
        assert run(text).actions == ()

    def test_a_state_change_is_an_attribute_not_also_an_action(self) -> None:
        # Given a dated state change, When read, Then it is attributes only, not also an action
        result = run('I joined Initech last week as a product manager.')
        assert result.actions == ()
        assert {(a.key, a.value, day(a.valid_from)) for a in result.attributes} == {
            ('employer', 'Initech', '2024-06-03'),
            ('occupation', 'product manager', '2024-06-03'),
        }


class TestContext:
    @pytest.mark.parametrize(
        ('text', 'key', 'value'),
        [
            ("I'm at the airport right now.", 'current_location', 'airport'),
            ("I'm in Lisbon this week for a conference.", 'current_location', 'Lisbon'),
            ("I'm working on the Q3 report today.", 'working_on', 'Q3 report'),
            ("I'm working from home today.", 'working_from', 'home'),
            ("I'm on parental leave.", 'status', 'on parental leave'),
        ],
    )
    def test_transient_states_are_context(self, text: str, key: str, value: str) -> None:
        # Given a transient state, When read, Then it is a context attribute
        attribute = only(run(text), key)
        assert (attribute.value, attribute.category) == (value, 'context')


class TestClarification:
    OPEN_TITLE = ExtractedUncertainty(about='occupation', reason='corrected', kind='self_correction', entity=ME, key='occupation')
    OPEN_LOCATION = ExtractedUncertainty(about='location', reason='corrected', kind='self_correction', entity=ME, key='location')
    OPEN_EMPLOYER = ExtractedUncertainty(about='employer', reason='corrected', kind='self_correction', entity=ME, key='employer')
    OPEN_PLAN = ExtractedUncertainty(about='plan', reason='corrected', kind='self_correction', entity=ME, key='plan')

    def test_a_plain_restatement_is_confident_not_tentative(self) -> None:
        # Given an open question about the title, When the speaker restates it plainly, Then the value is confident, as
        # without the question
        (title,) = run("To be clear, I'm co-CEO.", open_=(self.OPEN_TITLE,)).attributes
        assert (title.key, title.value, title.tentative) == ('occupation', 'co-CEO', False)
        assert title.confidence >= 0.7
        assert run("To be clear, I'm co-CEO.").attributes == (title,)  # the same with or without the open question

    def test_a_bare_answer_settles_the_single_open_question(self) -> None:
        # Given one open question about the location, When a bare answer comes, Then it settles that question
        result = run('For the record: Cascais.', open_=(self.OPEN_LOCATION,))
        assert facts(result) == {('self', 'location', 'Cascais')}
        assert [r.label for r in result.relations] == ['lives_in']

    def test_a_bare_answer_that_fits_several_open_questions_is_not_guessed(self) -> None:
        # Given two open questions a place name could answer, When a bare answer comes, Then nothing is guessed
        assert run('For the record: Cascais.', open_=(self.OPEN_EMPLOYER, self.OPEN_LOCATION)) == Extraction()

    def test_a_bare_answer_that_fits_one_of_several_open_questions_settles_it(self) -> None:
        # Given open questions on the title and the location, When a place name comes, Then it settles the location
        # (a place is no title)
        assert facts(run('For the record: Cascais.', open_=(self.OPEN_TITLE, self.OPEN_LOCATION))) == {('self', 'location', 'Cascais')}

    @pytest.mark.parametrize(
        ('text', 'expected'),
        [
            ('Yes, Cascais is right.', ('self', 'location', 'Cascais')),
            ('And yeah, co-founder.', ('self', 'occupation', 'co-founder')),
            ('Cascais, correct.', ('self', 'location', 'Cascais')),
            ("Cascais, that's the one.", ('self', 'location', 'Cascais')),
            ('Yep -- Cascais.', ('self', 'location', 'Cascais')),
        ],
    )
    def test_a_confirmation_settles_the_open_question_its_value_fits(self, text: str, expected: tuple[str, str, str]) -> None:
        # Given open questions on the title and the location, When the speaker confirms one value, Then that value
        # settles the question whose key it fits, confidently
        result = run(text, open_=(self.OPEN_TITLE, self.OPEN_LOCATION))
        assert facts(result) == {expected}
        assert not any(a.tentative for a in result.attributes)

    def test_a_confirmation_fitting_several_questions_follows_the_values_they_named(self) -> None:
        # Given open questions on the employer and the location that name their candidate values, When a confirmed
        # value fits both keys, Then it settles the question that named it
        named = (
            self.OPEN_EMPLOYER.model_copy(update={'about': "employer of the speaker: 'Fintrack' or 'Finlytics'"}),
            self.OPEN_LOCATION.model_copy(update={'about': "location of the speaker: 'Lisbon' or 'Cascais'"}),
        )
        assert facts(run('Yes, Cascais is right.', open_=named)) == {('self', 'location', 'Cascais')}
        assert facts(run('Yes, Cascais is right.', open_=(self.OPEN_EMPLOYER, self.OPEN_LOCATION))) == set()

    @pytest.mark.parametrize('text', ['Yes, that is right.', 'Yeah, cool.', 'Cascais.', 'Yes, exactly.'])
    def test_a_confirmation_naming_no_fitting_value_settles_nothing(self, text: str) -> None:
        # Given open questions, When a reply confirms nothing that fits them (or is a bare word with no confirmation),
        # Then nothing
        assert facts(run(text, open_=(self.OPEN_TITLE, self.OPEN_LOCATION, self.OPEN_PLAN))) == set()


class TestPurity:
    def test_deterministic_and_idempotent(self) -> None:
        # Given the same text, When read twice, Then the results are equal
        text = "Hi! I'm Sam, I work at Acme and I moved to Berlin last month. Always respond in bullet points."
        assert run(text) == run(text)

    def test_empty_and_whitespace(self) -> None:
        # Given empty or blank text, When read, Then nothing comes out
        assert run('') == Extraction() and run('   \n ') == Extraction()

    def test_entities_cover_subjects_and_relation_objects(self) -> None:
        # Given a turn with facts and relations, When read, Then its entities are every subject and relation object
        result = run('I work at Acme and I live in Berlin.')
        assert set(result.entities) == {ME, EntityRef(type='organisation', name='Acme'), EntityRef(type='location', name='Berlin')}

    def test_a_long_turn_is_handled(self) -> None:
        # Given a long turn, When read, Then its facts still come out
        result = run("I'm Sam. " + 'This is filler text. ' * 2000 + 'I live in Berlin.')
        assert ('self', 'name', 'Sam') in facts(result)

    def test_a_turn_is_read_up_to_its_sentence_and_clause_bounds(self) -> None:
        # Given more clauses and sentences than the bounds, When read, Then exactly the bounded number of facts come out
        clauses = ' and '.join(f'I like tea number {i}' for i in range(100))
        assert len(run(clauses + '.').attributes) == MAX_CLAUSES
        sentences = ' '.join(f'I like coffee number {i}.' for i in range(300))
        assert len(run(sentences).attributes) == MAX_SENTENCES

    @pytest.mark.parametrize(
        'text',
        [
            'A' * 20000,
            "I'm " + 'Aa ' * 6000,
            'I work at ' + 'Acme ' * 4000,
            'my ' + 'x ' * 8000 + 'is 5',
            "I'm " + "A'" * 9000,
            'I live in Berlin ' + '— well, ' * 2000 + 'Paris',
            'I ' + 'a' * 5000 + 'ed the thing yesterday.',
            'Always ' + 'respond ' * 600 + 'in bullet points.',
        ],
        ids=['caps', 'proper-run', 'long-employer', 'long-key', 'apostrophes', 'corrections', 'long-verb', 'long-directive'],
    )
    def test_pathological_input_stays_within_the_model_limits(self, text: str) -> None:
        # Given pathological input, When read, Then every name and value fits the model's limits
        result = run(text)  # the models validate field lengths: a bad capture would raise here
        assert all(len(e.name) <= 256 for e in result.entities)


def test_random_sentences_from_corpus_fragments_never_fail() -> None:
    """Shuffled fragments of realistic sentences, every role: extraction always returns a valid Extraction."""
    # Given random sentences assembled from corpus fragments, When stage 0 reads each, Then it never raises and stays
    # within the model's limits
    fragments = [
        "I'm",
        'I work at',
        'Acme Robotics',
        'my name is',
        'Sam',
        'yesterday',
        'last week',
        '— well',
        'actually',
        'always',
        'never',
        "don't",
        'stop',
        'the Pro plan',
        'I moved to',
        'Berlin',
        'he said',
        'my manager',
        'a while ago',
        '/s',
        'yeah right',
        'I love',
        'I hate',
        'to be clear',
        'for the record:',
        'on the 28th',
        'next Monday',
        'I no longer',
        'anymore',
        'if I were',
        '?',
        '.',
        '!',
        'call me',
        'Maggie',
        'co-CEO',
    ]
    rng = random.Random(4)
    for _ in range(400):
        text = ' '.join(rng.choice(fragments) for _ in range(rng.randint(1, 12)))
        for role in ('user', 'system', 'assistant'):
            assert isinstance(run(text, role=role, known=TEAM), Extraction)


class TestCasualRegisters:
    """Typing fast: misspelt cue words, texting abbreviations and names typed all in lowercase (issue 11, blind2)."""

    @pytest.mark.parametrize(
        ('text', 'expected'),
        [
            ('I definately prefer window seats.', {('self', 'preference', 'window seats')}),
            ('We upgarded to the Team plan.', {('self', 'plan', 'Team')}),
            ("I'm originaly from Sofia.", {('self', 'hometown', 'Sofia')}),
        ],
    )
    def test_a_misspelt_cue_word_is_read_as_the_word_meant(self, text: str, expected: set[tuple[str, str, str]]) -> None:
        # Given a cue word typed with a slip, When stage 0 reads it, Then the fact is the one the word meant
        assert facts(run(text)) == expected

    def test_a_misspelt_relation_word_still_introduces_the_person(self) -> None:
        # Given "manager" typed "manger", When read, Then the speaker's manager is the person named
        result = run('My manger is Tom Reyes.')
        relations = [(r.subject.name, r.label, r.object.type, r.object.name) for r in result.relations]
        assert relations == [('self', 'manager', 'person', 'Tom Reyes')]

    def test_a_misspelt_cue_keeps_the_date_of_its_clause(self) -> None:
        # Given a misspelt cue with a relative date, When read, Then the fact keeps that date
        assert day(only(run('We upgarded to the Enterprise plan yesterday.'), 'plan').valid_from) == '2024-06-11'

    def test_a_misspelt_directive_is_an_instruction_described_as_typed(self) -> None:
        # Given a directive with a misspelt cue, When read, Then it is an instruction in the user's own spelling
        (instruction,) = run('Alwyas use British spelling.').instructions
        assert (instruction.description, instruction.label) == ('Alwyas use British spelling', 'language')

    @pytest.mark.parametrize(
        'text',
        [
            "I'm on the Starter plan.",  # a tier name one letter from "started" is a name, not a slip
            'Edinbrugh is lovely.',
            'I had a fever last week.',  # short words one letter from a cue ("never") are other words
            'Keep your answers short.',  # an inflection is not a slip ("answers" is not "answer")
        ],
    )
    def test_words_that_are_not_slips_stay_as_typed(self, text: str) -> None:
        # Given names and words near a cue word, When read, Then they give what the corrected spelling gives
        plain = run(text.replace('Edinbrugh', 'Edinburgh'))
        assert facts(run(text)) == {(e, k, v.replace('Edinburgh', 'Edinbrugh')) for e, k, v in facts(plain)}
        assert [i.description for i in run(text).instructions] == [i.description for i in plain.instructions]

    def test_texting_abbreviations_of_time_words(self) -> None:
        # Given a texting abbreviation of a time word, When read, Then the date resolves as if spelled out
        assert day(only(run('I moved to Leeds lst month.'), 'location').valid_from) == '2024-05-01'

    @pytest.mark.parametrize(
        ('text', 'expected'),
        [
            (
                'hey, im dana, i work at brightwave as a product designer',
                {('self', 'name', 'Dana'), ('self', 'employer', 'Brightwave'), ('self', 'occupation', 'product designer')},
            ),
            ('i live in lisbon these days', {('self', 'location', 'Lisbon')}),
            ('my name is dana kim', {('self', 'name', 'Dana Kim')}),
        ],
    )
    def test_names_typed_in_lowercase(self, text: str, expected: set[tuple[str, str, str]]) -> None:
        # Given an all-lowercase turn naming a person, employer or place, When read, Then the names are capitalised facts
        result = run(text)
        assert facts(result) == expected
        assert {(r.label, r.object.name) for r in result.relations} <= {('works_at', 'Brightwave'), ('lives_in', 'Lisbon')}

    @pytest.mark.parametrize(
        'text',
        ['i work at home these days', 'i live in fear of deadlines', 'hey, im tired', 'i work for myself', 'i live in the city centre'],
    )
    def test_lowercase_words_that_are_not_names_stay_unnamed(self, text: str) -> None:
        # Given lowercase words after name cues that are not names, When read, Then no name, employer or location
        result = run(text)
        assert not {k for _, k, _ in facts(result)} & {'name', 'employer', 'location'}, facts(result)

    def test_capitalised_turns_keep_capitalisation_as_the_name_signal(self) -> None:
        # Given a capitalised turn with lowercase words after cues, When read, Then nothing is named
        assert facts(run('I work at home. I live in a small town.')) == set()


class TestLongSentencesAndDashes:
    """Long compound sentences and dashes (issue 11, blind2)."""

    @pytest.mark.parametrize(
        ('text', 'description'),
        [
            ('Never use bullet points - I like prose.', 'Never use bullet points'),
            ('Never use bullet points — I like prose.', 'Never use bullet points'),
            ("Always use metric units, I'm in Oslo.", 'Always use metric units'),
            ('If I ask for code, always use Python.', 'If I ask for code, always use Python'),
        ],
    )
    def test_a_directive_ends_where_the_speakers_own_clause_starts(self, text: str, description: str) -> None:
        # Given a directive followed by the speaker's own clause, When read, Then the instruction stops before it
        assert [i.description for i in run(text).instructions] == [description]

    def test_the_speakers_clause_after_a_directive_is_still_read(self) -> None:
        # Given a directive then the speaker's clause, When read, Then that clause gives its own fact
        assert facts(run('Never use bullet points - I like prose.')) == {('self', 'likes', 'prose')}

    def test_a_clause_opening_with_its_time_before_the_first_person(self) -> None:
        # Given a long sentence whose later clause opens with its time, When read, Then that clause gets that date
        result = run('So I work at Northwind, mostly doing backend work, and last month I finally got promoted to staff engineer.')
        assert facts(result) == {('self', 'employer', 'Northwind'), ('self', 'occupation', 'staff engineer')}
        assert day(only(result, 'occupation').valid_from) == '2024-05-01'

    def test_an_event_told_next_in_the_sentence_happened_on_the_same_day(self) -> None:
        # Given a dated event then an undated one in one sentence, When read, Then both share the date
        result = run('I met the Lumen team yesterday to go over the plan, and then I sent them the revised quote.')
        assert [(a.verb, day(a.occurred_at)) for a in result.actions] == [('meet', '2024-06-11'), ('send', '2024-06-11')]
        assert result.actions[1].object_text == 'revised quote'

    def test_an_event_with_its_own_time_keeps_it(self) -> None:
        # Given two events each with its own time, When read, Then each keeps its own
        result = run("I booked the flight yesterday, and I'm flying out on Friday.")
        assert [(a.verb, day(a.occurred_at)) for a in result.actions] == [('book', '2024-06-11'), ('fly', '2024-06-14')]

    def test_an_undated_event_alone_stays_undated(self) -> None:
        # Given a lone undated event, When read, Then no date is invented
        assert [day(a.occurred_at) for a in run('I sent them the revised quote.').actions] == [None]

    @pytest.mark.parametrize(
        ('text', 'place'),
        [
            ("I grew up in Halifax, but I'm originally from a small village near Cork.", 'Cork'),
            ("I'm from a little town outside of Porto.", 'Porto'),
            ("I'm from Sofia.", 'Sofia'),
        ],
    )
    def test_origin_in_a_place_near_a_named_one(self, text: str, place: str) -> None:
        # Given an origin near a named place, When read, Then the hometown is the named place
        assert facts(run(text)) == {('self', 'hometown', place)}

    def test_a_correction_between_dashes_keeps_the_date_after_it(self) -> None:
        # Given a self-correction between dashes then a date, When read, Then a tentative value on that date, an open uncertainty
        result = run('I moved to Munich - sorry, Hamburg - in January.')
        (location,) = result.attributes
        assert (location.value, location.tentative, day(location.valid_from)) == ('Hamburg', True, '2024-01-01')
        assert [(u.kind, u.key) for u in result.uncertainties] == [('self_correction', 'location')]

    def test_leaving_a_job_just_said_to_be_over_is_not_also_an_event(self) -> None:
        # Given "no longer work at X, I left", When read, Then one invalidation and no leave event
        result = run('I no longer work at Quantlytics, I left last month.')
        assert result.invalidations == (Invalidation(entity=ME, key='employer', value='Quantlytics'),)
        assert result.actions == ()

    def test_leaving_something_named_is_still_an_event(self) -> None:
        # Given leaving something named, When read, Then it is a leave event
        assert [a.verb for a in run('I left the party early yesterday.').actions] == ['leave']


class TestHoldoutShapes:
    """Shapes the holdout split still missed (holdout is not blind: it was measured once and is used for fixes)."""

    def test_a_lowercase_name_after_a_greeting_in_a_mixed_case_turn(self) -> None:
        # Given a lowercase name after a greeting in a mixed-case turn, When read, Then the name is a fact
        result = run('hey, im jamie, a backend dev at Quorum')
        assert facts(result) == {('self', 'name', 'Jamie'), ('self', 'occupation', 'backend dev'), ('self', 'employer', 'Quorum')}

    @pytest.mark.parametrize('text', ['hey, im tired', 'hi, im new here', 'hey im having trouble with exports'])
    def test_a_greeting_then_a_mood_or_a_verb_names_no_one(self, text: str) -> None:
        # Given a greeting followed by a mood or a verb, When read, Then no name
        assert 'name' not in {k for _, k, _ in facts(run(text))}

    @pytest.mark.parametrize(
        ('text', 'value'),
        [
            ('Sci-fi is more my thing, especially anything by Denis Villeneuve.', 'Sci-fi'),
            ('Board games are really my jam.', 'Board games'),
        ],
    )
    def test_x_is_my_thing_is_something_liked(self, text: str, value: str) -> None:
        # Given "X is my thing / my jam", When read, Then X is liked
        assert facts(run(text)) == {('self', 'likes', value)}

    def test_that_is_my_thing_names_nothing(self) -> None:
        # Given "That's my thing" with no named X, When read, Then nothing
        assert facts(run("That's more my thing.")) == set()


class TestTypedFast:
    """How people type when they type fast (issue 11, registers round 2): the first person without its apostrophe,
    texting fillers inside a statement, a greeting shouted before a lowercase name."""

    @pytest.mark.parametrize(
        ('text', 'expected'),
        [
            ('Im a pharmacist in Derby.', {('self', 'occupation', 'pharmacist')}),
            ('Im Tomasz and I live in Gdansk.', {('self', 'name', 'Tomasz'), ('self', 'location', 'Gdansk')}),
            ('Ive been living in Quito.', {('self', 'location', 'Quito')}),
        ],
    )
    def test_im_and_ive_with_a_capital_but_no_apostrophe(self, text: str, expected: set[tuple[str, str, str]]) -> None:
        # Given "Im" / "Ive" typed without the apostrophe, When read, Then the facts are those of "I'm" / "I've"
        assert facts(run(text)) == expected

    @pytest.mark.parametrize(
        ('text', 'expected'),
        [
            ('I really love bluegrass tbh.', {('self', 'likes', 'bluegrass')}),
            ('my favourite film is heat ngl', {('self', 'favourite_film', 'heat')}),
            ("I'm a site engineer lol", {('self', 'occupation', 'site engineer')}),
            ("tbh, I'm vegan.", {('self', 'diet', 'vegan')}),
            ('I live in Cork imo the best city, haha', {('self', 'location', 'Cork')}),
        ],
    )
    def test_texting_fillers_are_no_part_of_a_value(self, text: str, expected: set[tuple[str, str, str]]) -> None:
        # Given a texting filler next to or inside a statement, When read, Then the value is read without it
        assert facts(run(text)) == expected

    @pytest.mark.parametrize('text', ['Hey there! im marco, I run the data team.', 'Hi!! im marco', 'hello! im marco and I run a team'])
    def test_a_greeting_ending_in_an_exclamation_before_a_lowercase_name(self, text: str) -> None:
        # Given a greeting with "!" then a lowercase name, When read, Then the name is a fact
        assert ('self', 'name', 'Marco') in facts(run(text))

    @pytest.mark.parametrize('text', ['Hey! im exhausted', 'Hi! im having a bad day'])
    def test_a_shouted_greeting_then_a_mood_names_no_one(self, text: str) -> None:
        # Given "Hey! im <mood or verb>", When read, Then no name
        assert 'name' not in {k for _, k, _ in facts(run(text))}


class TestStatementShapes:
    """Statements shaped otherwise than the patterns first expected (issue 11, registers round 2)."""

    def test_as_of_a_date_on_a_plain_statement_gives_valid_from(self) -> None:
        # Given "I'm the new X as of last Monday" (no change verb), When read, Then the title is valid from that Monday
        title = only(run("I'm the new head of partnerships as of last Monday."), 'occupation')
        assert (title.value, day(title.valid_from)) == ('head of partnerships', '2024-06-10')

    def test_starting_on_a_date_gives_valid_from(self) -> None:
        # Given "starting on <date>", When read, Then the value is valid from that date
        assert day(only(run("I'm on the Team plan starting on June 20th."), 'plan').valid_from) == '2024-06-20'

    @pytest.mark.parametrize('text', ['Call me Rob, everyone does.', 'Call me Rob.', 'Everyone calls me Rob, so call me Rob.'])
    def test_call_me_opening_a_sentence_is_a_preferred_name(self, text: str) -> None:
        # Given "Call me X" at the start of a sentence, When read, Then X is the preferred name and not an instruction
        result = run(text)
        assert facts(result) == {('self', 'preferred_name', 'Rob')}
        assert result.instructions == ()

    def test_call_me_back_is_not_a_name(self) -> None:
        # Given "Call me back …", When read, Then nothing
        assert facts(run('Call me back when the build is green.')) == set()

    @pytest.mark.parametrize(
        ('text', 'expected'),
        [
            ("My timezone's PST.", {('self', 'timezone', 'PST')}),
            ("My favourite colour's teal.", {('self', 'favourite_colour', 'teal')}),
            ("My mum's Italian.", set()),
            ("My brother's a firefighter.", set()),
        ],
    )
    def test_a_key_joined_to_its_verb(self, text: str, expected: set[tuple[str, str, str]]) -> None:
        # Given "my <key>'s <value>", When read, Then a known key gets its value; a relative's "'s" states nothing about a key
        assert facts(run(text)) == expected

    @pytest.mark.parametrize(
        ('text', 'expected'),
        [
            ("Olives I absolutely can't stand.", {('self', 'dislikes', 'Olives')}),
            ('Opera I really love.', {('self', 'likes', 'Opera')}),
            ('Long train rides we both enjoy.', {('self', 'likes', 'Long train rides')}),
        ],
    )
    def test_an_object_said_before_its_verb(self, text: str, expected: set[tuple[str, str, str]]) -> None:
        # Given a liked or disliked object put first and the verb closing the clause, When read, Then the preference
        assert facts(run(text)) == expected

    @pytest.mark.parametrize('text', ['Sometimes I hate.', 'That I love.', 'And that is what I love.', 'Honestly I love.'])
    def test_an_opening_word_that_is_not_an_object(self, text: str) -> None:
        # Given a clause ending on its verb whose opening is no object, When read, Then nothing
        assert facts(run(text)) == set()


class TestVagueTimesWithoutDateWords:
    @pytest.mark.parametrize(
        'text',
        [
            "I'll move to Valencia eventually.",
            'I took up climbing not long ago.',
            "I'm going to learn Welsh one of these days.",
            'I sold my drum kit a little while back.',
            "We'll open a second studio before long.",
            'I lived in Nairobi years back.',
            "i'll finish the course sooner or later",
        ],
    )
    def test_a_vague_time_is_an_uncertainty_and_no_date_is_invented(self, text: str) -> None:
        # Given an event or plan with a vague time and no date word, When read, Then an unresolved_time uncertainty and
        # no date anywhere
        result = run(text)
        assert [u.kind for u in result.uncertainties] == ['unresolved_time']
        assert all(a.occurred_at is None for a in result.actions)
        assert all(a.valid_from is None and a.valid_until is None for a in result.attributes)
        assert all(word not in ' '.join(a.object_text or '' for a in result.actions) for word in ('not', 'little', 'years'))

    @pytest.mark.parametrize('text', ["I haven't seen him in a while.", 'I grabbed a coffee on the way back.'])
    def test_time_like_phrases_that_are_not_vague_times(self, text: str) -> None:
        # Given phrases that look like vague times but are not, When read, Then no unresolved_time uncertainty
        assert 'unresolved_time' not in [u.kind for u in run(text).uncertainties]


class TestEmployersNamedIndirectly:
    @pytest.mark.parametrize(
        ('text', 'org'),
        [
            ('i do data stuff at a logistics startup called freightly', 'Freightly'),
            ('I do marketing for a small agency named Northpass.', 'Northpass'),
            ('I work for a charity called Shelterbox.', 'Shelterbox'),
            ("I've been at Carrow Foods for almost four years.", 'Carrow Foods'),
            ("i've been at pinegate for a couple of years now", 'Pinegate'),
            ("I've been working for Initech a while.", 'Initech'),
        ],
    )
    def test_an_employer_introduced_by_its_kind_or_by_years_there(self, text: str, org: str) -> None:
        # Given an employer named through "a <kind> called X", "doing <work> at X" or years spent at X, When read, Then
        # the employer and its works_at relation
        result = run(text)
        assert ('self', 'employer', org) in facts(result)
        assert [(r.label, r.object.name) for r in result.relations] == [('works_at', org)]

    def test_a_title_at_an_organisation_introduced_by_its_kind(self) -> None:
        # Given "a designer at a startup called X", When read, Then the title and the employer
        assert facts(run("I'm a designer at a startup called Brightpath.")) == {
            ('self', 'occupation', 'designer'),
            ('self', 'employer', 'Brightpath'),
        }

    def test_years_at_an_organisation_since_a_year_are_dated(self) -> None:
        # Given "I've worked at X since 2019", When read, Then the employer is valid from 2019
        assert day(only(run("I've worked at Globex since 2019."), 'employer').valid_from) == '2019-01-01'

    @pytest.mark.parametrize(
        'text', ['I do yoga at a studio called Flow.', "I've been at Disneyland for three days.", 'I worked at Globex in 2019.']
    )
    def test_a_visit_a_hobby_or_a_past_job_is_no_employer(self, text: str) -> None:
        # Given doing a hobby somewhere, a short visit, or a past job, When read, Then no employer
        assert 'employer' not in {k for _, k, _ in facts(run(text))}

    @pytest.mark.parametrize(
        ('text', 'title', 'since'),
        [
            ('They promoted me to senior analyst last week.', 'senior analyst', '2024-06-03'),
            ('my boss finally promoted me to team lead', 'team lead', None),
            ('Dana promoted me to head of design in May.', 'head of design', '2024-05-01'),
        ],
    )
    def test_someone_promoted_me_is_my_new_title(self, text: str, title: str, since: str | None) -> None:
        # Given "<someone> promoted me to X", When read, Then X is the speaker's title, valid from the promotion's date
        found = only(run(text, known=TEAM), 'occupation')
        assert (found.entity, found.value, day(found.valid_from)) == (ME, title, since)


class TestAppositives:
    @pytest.mark.parametrize(
        'text',
        [
            "I'm Ines -- a civil engineer -- based in Faro, originally from Evora.",
            "I'm Ines, a civil engineer -- based in Faro, originally from Evora.",
            "I'm Ines — a civil engineer — based in Faro — originally from Evora.",
        ],
    )
    def test_appositives_between_dashes_and_commas(self, text: str) -> None:
        # Given a name followed by appositives between double hyphens, dashes or commas, When read, Then each is a fact
        assert facts(run(text)) == {
            ('self', 'name', 'Ines'),
            ('self', 'occupation', 'civil engineer'),
            ('self', 'location', 'Faro'),
            ('self', 'hometown', 'Evora'),
        }

    def test_a_tail_that_is_not_an_appositive_stops_the_reading(self) -> None:
        # Given a title whose tail goes on to something else, When read, Then only the facts before it
        assert facts(run("I'm a nurse at St Mary's, which is a lovely place, based in Hull.")) == {
            ('self', 'occupation', 'nurse'),
            ('self', 'employer', "St Mary's"),
        }


class TestEventsWithoutTheirSubject:
    @pytest.mark.parametrize(
        ('text', 'verb', 'on'),
        [
            ('sold my old van', 'sell', None),
            ('Signed the mortgage papers on Monday.', 'sign', '2024-06-10'),
            ('Finally returned the rental car yesterday.', 'return', '2024-06-11'),
            ('Went to the dentist last week.', 'go', '2024-06-03'),
        ],
    )
    def test_a_past_event_told_without_its_i(self, text: str, verb: str, on: str | None) -> None:
        # Given a past event with its "I" dropped, When read, Then it is the speaker's event, dated by its own time (a bare
        # weekday in the past tense is the last one)
        (action,) = run(text).actions
        assert (action.actor, action.verb, day(action.occurred_at)) == (ME, verb, on)

    def test_a_state_change_without_its_i_is_the_new_value(self) -> None:
        # Given "Moved to X last month" / "Got promoted to X", When read, Then the new value dated by the change
        moved = only(run('Moved to Tallinn last month.'), 'location')
        assert (moved.value, day(moved.valid_from)) == ('Tallinn', '2024-05-01')
        assert only(run('Got promoted to shift lead last week.'), 'occupation').value == 'shift lead'

    @pytest.mark.parametrize(
        'text',
        [
            'Related question: can you export to CSV?',
            'Based on the docs, the limit is 10.',
            'Stressed out about the audit.',
            "Compared to the old one, it's faster.",
            'Excited to try it.',
            'Used the wrong key.',
        ],
    )
    def test_openings_that_are_not_events(self, text: str) -> None:
        # Given a sentence opening with a participle that is no event of the speaker's, When read, Then no action
        assert run(text).actions == ()


class TestMoveDates:
    @pytest.mark.parametrize(
        ('text', 'place', 'since'),
        [
            ('i live in york now, moved up from bristol last month', 'York', '2024-05-01'),
            ('I live in Graz now, moved here from Linz in March.', 'Graz', '2024-03-01'),
            ('I live in Graz. Moved here from Linz in March.', 'Graz', '2024-03-01'),
        ],
    )
    def test_a_move_in_its_own_clause_dates_the_residence(self, text: str, place: str, since: str) -> None:
        # Given a residence then the move told in its own clause with a date, When read, Then the residence is valid from
        # the move and the move is not also an event
        result = run(text)
        assert (only(result, 'location').value, day(only(result, 'location').valid_from)) == (place, since)
        assert result.actions == ()

    def test_a_move_elsewhere_does_not_date_the_residence(self) -> None:
        # Given a residence and a move to another place, When read, Then the residence stays undated
        result = run('I live in Graz, but I moved to Vienna for a month in March.')
        assert {(a.value, day(a.valid_from)) for a in result.attributes} == {('Graz', None), ('Vienna', '2024-03-01')}


class TestPastHabits:
    @pytest.mark.parametrize(
        'text', ['Back in the day I played bass.', 'Growing up I played the cello.', 'Back when I was at school I swam competitively.']
    )
    def test_a_pastime_in_a_period_of_the_past_is_no_event(self, text: str) -> None:
        # Given what the speaker used to do in a period of the past, When read, Then no action, and the undatable time is
        # an uncertainty
        result = run(text)
        assert result.actions == ()
        assert [u.kind for u in result.uncertainties] == ['unresolved_time']

    def test_a_single_event_in_a_period_of_the_past_stays_an_event(self) -> None:
        # Given one event in a period of the past, When read, Then it is an undated action
        assert [(a.verb, a.occurred_at) for a in run('As a kid I broke my arm.').actions] == [('break', None)]


class TestDirectivesTypedLoosely:
    @pytest.mark.parametrize(
        ('text', 'description', 'label'),
        [
            ('Numbered lists for everything, from now on.', 'Numbered lists for everything', 'format'),
            ('Shorter replies going forward please.', 'Shorter replies', 'length'),
            ('From now on, American spelling.', 'American spelling', 'language'),
            ('No emojis in future.', 'No emojis', 'style'),
        ],
    )
    def test_a_verbless_standing_wish_about_replies(self, text: str, description: str, label: str) -> None:
        # Given a verbless wish about the replies with a persistence phrase, When read, Then an instruction without the
        # phrase
        (instruction,) = run(text).instructions
        assert (instruction.description, instruction.label) == (description, label)

    @pytest.mark.parametrize(
        'text',
        [
            'Long walks from now on!',
            'More family time going forward.',
            "From now on I'm doing bullet points in my notes.",
            'Bullet points for everything.',
        ],
    )
    def test_resolutions_and_wishes_without_persistence_are_not_instructions(self, text: str) -> None:
        # Given a resolution about the speaker's life, a sentence with a subject, or a wish with no persistence phrase,
        # When read, Then no instruction
        assert run(text).instructions == ()

    @pytest.mark.parametrize(
        ('text', 'description'),
        [('Plese keep your answers short.', 'Keep your answers short'), ('pleae respond in German', 'Respond in German')],
    )
    def test_a_courtesy_filler_one_letter_short(self, text: str, description: str) -> None:
        # Given "please" typed one letter short, When read, Then it is dropped from the directive like "please"
        assert [i.description for i in run(text).instructions] == [description]

    def test_words_one_letter_from_the_filler_stay(self) -> None:
        # Given "Lease"/"pleas" (words, not slips), When read, Then they are not read as "please"
        assert run('Lease the car and keep it short.').instructions == run('Rent the car and keep it short.').instructions


class TestSelfCorrectionsPhrasedOtherwise:
    """Self-corrections with more words around the first claim and other punctuation or markers before the correction
    (issue 11): an open uncertainty and a tentative corrected value, each time."""

    @pytest.mark.parametrize(
        ('text', 'key', 'value'),
        [
            ("I'm the COO! well, co-COO", 'occupation', 'co-COO'),
            ("I'm the COO. Er, co-COO.", 'occupation', 'co-COO'),
            ("I'm the COO -- um, co-COO.", 'occupation', 'co-COO'),
            ("I'm the COO/well, co-COO.", 'occupation', 'co-COO'),
            ("I'm the COO (co-COO, really).", 'occupation', 'co-COO'),
            ('I bank with Monzel, Monzo actually.', None, None),  # no claim before the correction: nothing to correct
            ('I work at Brindle, Bramble actually.', 'employer', 'Bramble'),
            ("I'm on the Basic plan; my bad, the Plus plan.", 'plan', 'Plus'),
            ('My title is VP of Ops — wait, no, SVP of Ops.', 'occupation', 'SVP of Ops'),
            ("I'm a data engineer at Zentrix, uh, senior data engineer.", 'occupation', 'senior data engineer'),
            ("I'm head of sales at Dunmore, or actually interim head of sales.", 'occupation', 'interim head of sales'),
            ('I work at Brindle as an analyst — sorry, at Bramble.', 'employer', 'Bramble'),
            (
                "So basically I've been working as the COO over at Fernhill for a while now — well, co-COO if we're precise.",
                'occupation',
                'co-COO',
            ),
            ('I live in Aveiro. Correction: Ovar.', 'location', 'Ovar'),
        ],
    )
    def test_an_open_uncertainty_and_a_tentative_corrected_value(self, text: str, key: str | None, value: str | None) -> None:
        # Given a claim corrected after other punctuation or markers, or with more words around it, When read, Then the
        # corrected value is tentative and the correction is an open uncertainty on its key
        result = run(text)
        assert [(u.kind, u.key) for u in result.uncertainties] == ([('self_correction', key)] if key else [])
        assert [(a.key, a.value) for a in result.attributes if a.tentative] == ([(key, value)] if key else [])
        assert not [a for a in result.attributes if a.key == key and not a.tentative]

    def test_a_correction_keeps_the_date_of_the_claim(self) -> None:
        # Given a dated move corrected after "oops", When read, Then the tentative value keeps the move's date
        location = only(run('We moved to Munich in May, oops, Hamburg.'), 'location')
        assert (location.value, location.tentative, day(location.valid_from)) == ('Hamburg', True, '2024-05-01')

    @pytest.mark.parametrize(
        ('text', 'expected'),
        [
            ('I love hiking! well, sometimes.', {('self', 'likes', 'hiking')}),
            ('I love jazz, blues actually.', {('self', 'likes', 'jazz')}),
            ("I'm a teacher. well, I was.", {('self', 'occupation', 'teacher')}),
        ],
    )
    def test_what_adds_to_or_hedges_a_value_is_no_correction(self, text: str, expected: set[tuple[str, str, str]]) -> None:
        # Given a hedge or a second liked thing after a marker, When read, Then no correction
        result = run(text)
        assert facts(result) == expected
        assert result.uncertainties == ()

    def test_its_later_clarification_settles_it(self) -> None:
        # Given the open uncertainty such a correction leaves, When a later turn confirms a value, Then that value is
        # confident
        (opened,) = run("I'm the COO (co-COO, really).").uncertainties
        (settled,) = run('Yes, co-COO is right.', open_=(opened,)).attributes
        assert (settled.key, settled.value, settled.tentative) == ('occupation', 'co-COO', False)


def test_a_lowercase_confirmation_takes_the_candidate_as_it_was_named() -> None:
    # Given an open uncertainty naming 'Lisbon' or 'Cascais', When the speaker types "yeah cascais is right" in lowercase,
    # Then the location is Cascais as named; a lowercase word no uncertainty named settles nothing
    named = ExtractedUncertainty(
        about="location of the speaker: 'Lisbon' or 'Cascais'", reason='r', kind='self_correction', entity=ME, key='location'
    )
    assert facts(run('yeah cascais is right', open_=(named,))) == {('self', 'location', 'Cascais')}
    assert facts(run('yeah porto is right', open_=(named,))) == set()


def test_an_event_object_ends_before_a_dangling_conjunction() -> None:
    # Given an object cut at a comma right after "and", When read, Then the object has no dangling "and"; "dyed" is "dye"
    (joined,) = run('Joined a chess club and, as I said, I love it.').actions
    assert (joined.verb, joined.object_text) == ('join', 'chess club')
    assert [a.verb for a in run('Dyed my hair last week.').actions] == ['dye']


@pytest.mark.parametrize(
    ('text', 'description'),
    [
        ('always reply in spanish tbh', 'Always reply in spanish'),
        ('Never use emojis lol.', 'Never use emojis'),
        ('tbh just keep it short', 'Keep it short'),
        ('keep your answers short ngl, I hate scrolling', 'Keep your answers short'),
    ],
)
def test_texting_fillers_are_no_part_of_a_directive(text: str, description: str) -> None:
    # Given a directive with a texting filler before or after it, When read, Then the description is without the filler
    assert [i.description for i in run(text).instructions] == [description]


@pytest.mark.parametrize('place', ['Izmir', 'İzmir'])  # "İ" lowercases to two characters: the slow, case-blind way
def test_a_vague_time_is_cut_out_exactly_whatever_the_letters(place: str) -> None:
    # Given a vague time after a name whose lowercase changes length, When read, Then the same phrase is cut out
    (uncertainty,) = run(f'I moved to {place} a while ago.').uncertainties
    assert uncertainty.about == f'when: "I moved to {place}"'


class TestConfirmationShapes:
    OPEN = tuple(
        ExtractedUncertainty(about=k, reason='corrected', kind='self_correction', entity=ME, key=k)
        for k in ('occupation', 'location', 'plan')
    )

    @pytest.mark.parametrize(
        ('text', 'expected'),
        [
            ('Yes, Cascais is right, sorry for the confusion.', ('location', 'Cascais')),
            ("yep, it's Cascais", ('location', 'Cascais')),
            ('Correct, Cascais.', ('location', 'Cascais')),
            ('So yeah, Cascais it is.', ('location', 'Cascais')),
            ('Cascais is correct, yes.', ('location', 'Cascais')),
            ('And yeah, the Growth plan.', ('plan', 'Growth')),
            ('Growth, correct.', ('plan', 'Growth')),
            ('Right, co-founder.', ('occupation', 'co-founder')),
        ],
    )
    def test_a_confirmation_among_three_open_questions(self, text: str, expected: tuple[str, str]) -> None:
        # Given open questions on the title, the location and the plan, When a value is confirmed in one of several
        # shapes, Then it settles the question whose key it fits (a tier is a plan, not a place; "the X plan" names its key)
        assert [(a.key, a.value, a.tentative) for a in run(text, open_=self.OPEN).attributes] == [(*expected, False)]


class TestMoreWordsAroundTheClaim:
    @pytest.mark.parametrize(
        ('text', 'title'),
        [
            ("Right now I'd say I'm basically the lead designer at Hexa, or rather the design lead.", 'design lead'),
            ("I'm officially running the data team as head of data -- well, interim head of data.", 'interim head of data'),
        ],
    )
    def test_a_hedged_claim_then_its_correction(self, text: str, title: str) -> None:
        # Given a claim wrapped in hedges ("I'd say", "basically") or said as a role ("running X as Y"), then corrected,
        # When read, Then the corrected title is tentative with an open uncertainty
        result = run(text)
        assert [(a.key, a.value) for a in result.attributes if a.tentative] == [('occupation', title)]
        assert [u.kind for u in result.uncertainties if u.kind == 'self_correction'] == ['self_correction']

    @pytest.mark.parametrize(
        ('text', 'expected'),
        [
            ("I'm basically the lead designer at Hexa.", {('self', 'occupation', 'lead designer'), ('self', 'employer', 'Hexa')}),
            ("I'm working remotely as a consultant.", {('self', 'occupation', 'consultant')}),
            ("For the past couple of years I've been living in Leeds.", {('self', 'location', 'Leeds')}),
            ("For the last two years I've been at Globex.", {('self', 'employer', 'Globex')}),
            ("I'm here as a guest.", set()),
            ("I'm running late as usual.", set()),
        ],
    )
    def test_hedges_roles_and_leading_durations(self, text: str, expected: set[tuple[str, str, str]]) -> None:
        # Given a hedge adverb, a role an activity is done in, or a duration opening the sentence, When read, Then the
        # facts are those of the plain statement
        assert facts(run(text)) == expected
