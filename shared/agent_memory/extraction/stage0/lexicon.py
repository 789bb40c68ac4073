"""Closed word lists stage 0 relies on, and a small English verb lemmatiser."""

from __future__ import annotations


def word_set(words: str) -> frozenset[str]:
    """A closed word list written as one space-separated string."""
    return frozenset(words.split())


JOB_HEADS = word_set(
    'engineer developer programmer designer manager director scientist analyst consultant teacher nurse doctor physician lawyer '
    'attorney student researcher architect founder cofounder co-founder accountant writer author marketer recruiter lead intern '
    'freelancer contractor professor lecturer officer specialist administrator admin editor journalist photographer chef pilot '
    'salesperson owner president partner executive coordinator technician strategist advisor adviser counsel paralegal pharmacist '
    'therapist psychologist dentist surgeon economist statistician translator producer assistant associate principal head chair '
    'chairman chairwoman chairperson vp svp evp ceo cto cfo coo cio cmo cpo ciso sre pm cofounder owner operator investor mechanic '
    'electrician plumber carpenter veterinarian vet librarian clerk cashier barista waiter waitress bartender driver courier '
    'consultant tester maintainer tutor coach trainer instructor supervisor foreman representative rep agent broker banker trader '
    'auditor controller treasurer secretary receptionist nanny caregiver scrum master ux ui dev devops '
    # what people call their work in conversation
    'nurse midwife paramedic medic surgeon radiographer physiotherapist physio optician optometrist hygienist vet '
    'veterinarian tech curator illustrator artist painter sculptor musician singer actor actress dancer choreographer '
    'carpenter joiner builder bricklayer roofer welder electrician plumber mechanic machinist labourer laborer '
    'farmer gardener landscaper florist baker butcher cook chef sous barista bartender waiter server dishwasher '
    'cleaner housekeeper janitor caretaker porter guard firefighter policeman policewoman detective soldier sailor '
    'marine captain steward stewardess attendant trucker truck taxi cabbie courier postman postwoman mailman '
    'librarian archivist teacher tutor lecturer professor headteacher headmaster principal dean chancellor '
    'counsellor counselor therapist psychiatrist psychologist social worker carer nanny childminder '
    'hairdresser barber stylist beautician tattooist photographer videographer filmmaker editor reporter '
    'journalist columnist blogger influencer streamer youtuber podcaster copywriter writer novelist poet '
    'translator interpreter accountant bookkeeper actuary banker cashier teller underwriter adjuster '
    'pharmacist dentist orthodontist chiropractor dietitian nutritionist cardiologist consultant registrar '
    'resident intern apprentice trainee graduate student postdoc researcher scientist chemist biologist physicist '
    'mathematician statistician economist analyst engineer developer programmer coder tester designer architect '
    'surveyor planner inspector estimator draughtsman draftsman technician operator dispatcher controller '
    'leader manager director supervisor coordinator administrator officer clerk assistant secretary receptionist '
    'salesman saleswoman retailer shopkeeper merchant entrepreneur founder freelancer contractor consultant '
    'lawyer solicitor barrister attorney judge paralegal notary clergyman priest vicar pastor rabbi imam '
    'retiree pensioner homemaker housewife househusband'
)
ORG_SUFFIXES = word_set(
    'labs lab inc ltd llc llp corp corporation company co gmbh ag sa bv plc technologies tech systems software group robotics '
    'solutions studio studios partners bank health capital media analytics consulting industries holdings ventures networks '
    'digital foundation institute university agency hospital infirmary clinic surgery practice school college academy '
    'museum library church hotel restaurant cafe café bakery grill bar pub brewery store shop market supermarket pharmacy '
    'dental veterinary centre center council ministry department dept office firm associates bros brothers b.v. bv. ltd. '
    'general medical '
    'inc. co. corp. gmbh. llc. plc. s.a. sa. ag. nv n.v. oy ab kg b.v n.v s.a'
)
C_LEVEL = word_set('ceo cto cfo coo cio cmo cpo ciso vp svp evp pm sre gm md')
DEPARTMENTS = word_set(
    'engineering sales marketing product operations ops finance design data people hr research growth support security it '
    'infrastructure platform legal partnerships customer success business development analytics content communications '
    'strategy technology procurement quality talent recruiting'
)
TITLE_MODIFIERS = word_set('other new current our their my your acting')

LANGUAGES = word_set(
    'english german french spanish portuguese italian dutch polish swedish norwegian danish finnish russian ukrainian czech '
    'greek turkish arabic hebrew hindi urdu bengali punjabi tamil japanese korean chinese mandarin cantonese vietnamese thai '
    'indonesian malay tagalog swahili romanian hungarian catalan basque irish welsh'
)
TIER_WORDS = word_set(
    'free basic starter standard plus pro premium business team teams enterprise growth scale professional unlimited ultimate '
    'essentials individual personal family student hobby developer'
)

NATIONALITIES = word_set(
    'american british english scottish welsh irish northern canadian australian kiwi indian pakistani bangladeshi chinese '
    'japanese korean vietnamese thai filipino indonesian malaysian singaporean german french spanish portuguese italian dutch '
    'belgian swiss austrian swedish danish norwegian finnish icelandic polish czech slovak hungarian romanian bulgarian greek '
    'turkish russian ukrainian belarusian lithuanian latvian estonian serbian croatian bosnian slovenian albanian israeli '
    'lebanese syrian iranian iraqi egyptian moroccan algerian tunisian nigerian ghanaian kenyan ethiopian somali ugandan '
    'tanzanian south african zimbabwean mexican brazilian argentinian argentine chilean colombian peruvian venezuelan '
    'cuban jamaican haitian dominican puerto rican ecuadorian uruguayan paraguayan bolivian'
)
SPORTS = {
    'swim': 'swimming', 'run': 'running', 'jog': 'jogging', 'cycle': 'cycling', 'bike': 'cycling', 'hike': 'hiking',
    'climb': 'climbing', 'boulder': 'bouldering', 'surf': 'surfing', 'ski': 'skiing', 'snowboard': 'snowboarding',
    'skate': 'skating', 'row': 'rowing', 'box': 'boxing', 'fence': 'fencing', 'sail': 'sailing', 'kayak': 'kayaking',
}  # fmt: skip
SPORT_GERUNDS = frozenset(SPORTS.values()) | {'yoga', 'pilates', 'crossfit', 'parkrun', 'parkruns', 'karate', 'judo'}

NOT_NAMES = word_set(
    'sorry ok okay back done fine good great here there home ready sure not also just so really afraid glad happy sad tired '
    'busy new late early free available online offline american british english german french spanish italian dutch canadian '
    'australian indian chinese japanese korean brazilian mexican irish scottish welsh european asian african portuguese polish '
    'swiss austrian belgian swedish danish norwegian finnish russian ukrainian greek turkish israeli jewish christian muslim '
    'catholic vegan vegetarian monday tuesday wednesday thursday friday saturday sunday january february march april may june '
    'july august september october november december'
)

# Past forms that describe states, thoughts or speech rather than something that happened.
NON_EVENT_VERBS = word_set(
    'was were had did said told thought felt wanted needed liked loved hated preferred used meant guessed hoped wished knew noticed '
    'realised realized saw heard forgot remembered believed decided tried mentioned lived worked been seemed looked sounded '
    'figured wondered assumed supposed expected understood enjoyed disliked could would should might must'
)

_IRREGULAR = {
    'went': 'go',
    'gone': 'go',
    'bought': 'buy',
    'sent': 'send',
    'made': 'make',
    'making': 'make',
    'took': 'take',
    'taken': 'take',
    'taking': 'take',
    'got': 'get',
    'gotten': 'get',
    'wrote': 'write',
    'written': 'write',
    'writing': 'write',
    'met': 'meet',
    'flew': 'fly',
    'flown': 'fly',
    'left': 'leave',
    'began': 'begin',
    'begun': 'begin',
    'ran': 'run',
    'built': 'build',
    'sold': 'sell',
    'paid': 'pay',
    'gave': 'give',
    'given': 'give',
    'giving': 'give',
    'found': 'find',
    'brought': 'bring',
    'came': 'come',
    'coming': 'come',
    'spent': 'spend',
    'lost': 'lose',
    'won': 'win',
    'hit': 'hit',
    'set': 'set',
    'put': 'put',
    'cut': 'cut',
    'quit': 'quit',
    'read': 'read',
    'broke': 'break',
    'broken': 'break',
    'chose': 'choose',
    'chosen': 'choose',
    'drove': 'drive',
    'driven': 'drive',
    'driving': 'drive',
    'ate': 'eat',
    'eaten': 'eat',
    'drank': 'drink',
    'held': 'hold',
    'kept': 'keep',
    'led': 'lead',
    'taught': 'teach',
    'caught': 'catch',
    'fought': 'fight',
    'sat': 'sit',
    'stood': 'stand',
    'swam': 'swim',
    'threw': 'throw',
    "won't": 'will',
    'done': 'do',
    'having': 'have',
    'rode': 'ride',
    'shut': 'shut',
    'lent': 'lend',
    'dealt': 'deal',
    'arranged': 'arrange',
    'changed': 'change',
    'exchanged': 'exchange',
    'cancelled': 'cancel',
    'travelled': 'travel',
    'labelled': 'label',
    'modelled': 'model',
    'travelling': 'travel',
    'cancelling': 'cancel',
    'edited': 'edit',
    'visited': 'visit',
    'focused': 'focus',
    'targeted': 'target',
    'budgeted': 'budget',
    'hosting': 'host',
    'hosted': 'host',
    'pivoted': 'pivot',
    'leaving': 'leave',
    'flying': 'fly',
    'seeing': 'see',
    'moving': 'move',
    'upgraded': 'upgrade',
    'downgraded': 'downgrade',
    'released': 'release',
    'created': 'create',
    'creating': 'create',
    'releasing': 'release',
    'raised': 'raise',
    'paused': 'pause',
    'caused': 'cause',
    'increased': 'increase',
    'decreased': 'decrease',
    'praised': 'praise',
    'dyed': 'dye',
}
_E_RESTORING = (
    'v',
    'z',
    'c',
    'at',
    'ut',
    'ir',
    'ar',
    'ur',
    'as',
    'os',
    'is',
    'us',
    'bl',
    'pl',
    'tl',
    'dl',
    'kl',
    'gl',
    'ul',
    'et',
    'id',
    'ot',
    'ok',
    'ob',
    'ub',
    'im',
    'um',
    'ap',
)
_KEEP_AS_IS = word_set('book look cook hook sign join start finish launch renew deploy order present open pitch reach search fetch')
_VOWELS = frozenset('aeiou')


def lemma(word: str) -> str:
    """Base form of a past/-ing verb ("shipped" → ship, "moved" → move, "flying" → fly); other words unchanged."""
    w = word.lower()
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if w.endswith('ied') and len(w) > 4:
        return w[:-3] + 'y'
    if w.endswith('ing') and len(w) > 5:
        return _restore(w[:-3])
    if w.endswith('ed') and len(w) > 3:
        return _restore(w[:-2])
    return w


def _restore(stem: str) -> str:
    """Undo the spelling change of -ed/-ing: undouble (shipp → ship) or put the silent e back (mov → move)."""
    if stem in _KEEP_AS_IS:
        return stem
    if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] in 'bdgmnprt':
        return stem[:-1]
    if len(stem) >= 3 and stem[-2] in _VOWELS and stem[-3] in _VOWELS and stem[-1] not in 'svzc':
        return stem  # boot, join, treat
    if stem.endswith(_E_RESTORING) and not stem.endswith(('ss', 'st', 'sk', 'ck', 'sh', 'ch')):
        return stem + 'e'
    return stem


def is_past_form(word: str) -> bool:
    w = word.lower()
    if w in _IRREGULAR:
        return not w.endswith('ing')
    return w.endswith('ed') and len(w) > 3 and not w.endswith('eed')
