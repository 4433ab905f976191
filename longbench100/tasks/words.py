"""Our own small word lists for needle keys: adjective-noun pairs such as ``quiet-harbor``.

RULER draws its keys from a word-list package; ours are written out here so generation needs no
download and no extra dependency. About 16,000 distinct keys: enough for needle haystacks (one key
per distractor needle) up to about 256k tokens.
"""

import random

ADJECTIVES = tuple("""
able amber ancient angry bare bold brave breezy bright brisk broad calm careful cheerful chilly clever
cloudy coarse cosy crisp curious damp dark deep dusty eager early easy empty faint famous fancy fast
fierce flat fluffy fond fresh friendly frozen gentle giant glad golden grand green happy hardy heavy
hidden hollow honest humble icy idle jolly kind large late lazy little lively lonely loud lucky mellow
merry mighty misty modest muddy narrow neat noble odd orange pale patient plain polite proud purple
quick quiet rapid rare rough round rusty salty sharp shiny silent silver sleepy slow smooth soft
sour spare spicy steady steep stern stiff stormy strong sturdy sunny sweet swift tall tame tender thick
tidy tiny tough vast velvet warm wary weary wide wild windy wise witty woolly young zesty
""".split())

NOUNS = tuple("""
acorn anchor apple arrow badger bakery basket beacon bell bench blanket boat bottle bridge brook bucket
button cabin camel candle canyon carpet castle cellar chimney cliff clock cloud comet compass cottage
crater dolphin door dragon drum eagle engine falcon feather fence ferry field forest fountain garden
gate glacier glove harbor hammer hat hill island jacket kettle kite ladder lake lantern lemon lighthouse
meadow mirror mountain needle ocean orchard otter oven paddle parrot pebble pencil pepper piano pillow
planet pond puzzle quilt rabbit raven ribbon river robot saddle sailor shovel spoon squirrel stable
stone storm street sugar summit swan table teapot tent thimble thunder tiger torch tower tractor train
trumpet tulip tunnel turtle umbrella valley violin wagon walrus whistle window wolf yacht zebra
""".split())


def word_key(rng: random.Random) -> str:
    """One adjective-noun key drawn from ``rng``, e.g. ``quiet-harbor``."""
    return f"{rng.choice(ADJECTIVES)}-{rng.choice(NOUNS)}"


def word_key_count() -> int:
    """How many distinct word keys there are."""
    return len(ADJECTIVES) * len(NOUNS)


def distinct_word_keys(rng: random.Random, count: int, exclude: set[str]) -> list[str]:
    """Up to ``count`` different word keys not in ``exclude``, in a random order drawn from ``rng``."""
    total = word_key_count()
    indices = rng.sample(range(total), min(total, count + len(exclude)))
    keys = (f"{ADJECTIVES[index // len(NOUNS)]}-{NOUNS[index % len(NOUNS)]}" for index in indices)
    return [key for key in keys if key not in exclude][:count]
