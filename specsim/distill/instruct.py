"""Prompts for the token corpus, beyond templates: the target writes most of them itself (self-instruct).

Each round of :mod:`specsim.distill.corpus` asks the target (sampled, T = 1) to write requests from a
*seed instruction* (a request kind x a domain x a persona), then answers them. Other sources:

- ``passage`` seeds: the target writes a short text, which becomes a rewriting task (summarise, simplify,
  bullet points, formal tone, ...) with the text quoted in the prompt;
- arithmetic word problems with random names, things and numbers;
- code tasks x languages, and the template, task-family and stdlib prompts of :mod:`specsim.distill.training_prompts`;
- multi-turn chat: an answered conversation gets a follow-up user turn and is answered again.

Every prompt passes :func:`heldout_overlap`: word n-gram overlap with each held-out prompt, plus the
content-word rule of
:func:`specsim.distill.training_prompts.too_close_to_heldout`. The largest overlap kept is reported.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import lru_cache

from specsim.distill import training_prompts as P

DOMAINS = [
    "ancient history", "modern history", "home cooking", "baking", "astronomy", "Python programming",
    "web development", "databases", "music theory", "learning an instrument", "football", "tennis", "basketball",
    "fitness", "nutrition", "mental health", "sleep", "travel in Asia", "travel in Europe", "budget travel",
    "economics", "personal finance", "investing", "small business", "marketing", "job hunting", "management",
    "geography", "oceans", "mountains", "rivers", "painting", "sculpture", "photography", "film", "television",
    "novels", "poetry", "grammar", "learning languages", "mathematics", "statistics", "probability", "geometry",
    "chemistry", "physics", "biology", "genetics", "medicine", "first aid", "philosophy", "ethics", "psychology",
    "sociology", "law", "politics", "elections", "fashion", "interior design", "architecture", "pets", "dogs",
    "cats", "birds", "insects", "farming", "gardening", "trees", "weather", "climate change", "renewable energy",
    "electric power", "engineering", "robotics", "artificial intelligence", "computers", "smartphones",
    "video games", "board games", "puzzles", "mythology", "religion", "festivals", "food culture", "wine and beer",
    "coffee and tea", "parenting", "education", "university life", "friendship", "relationships", "weddings",
    "home repair", "cleaning", "cars", "trains", "aviation", "space exploration", "inventions", "famous scientists",
    "famous artists", "world leaders", "economic history", "cities", "villages", "deserts", "islands", "volcanoes",
    "dinosaurs", "evolution", "the human body", "the brain", "nutrition for athletes", "cycling", "hiking",
    "camping", "fishing", "sailing", "swimming", "running", "yoga", "meditation", "writing fiction",
    "journalism", "social media", "online privacy", "cybersecurity", "open source software", "spreadsheets",
    "linux", "cloud computing", "machine learning", "data science", "chess", "card games", "magic tricks",
    "comedy", "theatre", "dance", "opera", "museums", "libraries", "recycling", "minimalism", "shopping",
    "customer service", "negotiation", "public speaking", "time management", "productivity", "habits",
    "volunteering", "charity", "retirement", "insurance", "taxes", "real estate", "moving house", "neighbours",
]
PERSONAS = [
    "a curious child", "a high-school student", "a university student", "a teacher", "a parent", "a retiree",
    "a software developer", "a nurse", "a small business owner", "a tourist", "a journalist", "a scientist",
    "a chef", "a beginner", "an expert", "a farmer", "a novelist", "a manager", "a sports coach", "a librarian",
]
SEED_KINDS = {
    "question": "Write one question that {p} might ask an AI assistant about {d}. Reply with the question only.",
    "howto": "Write one 'how do I' question that {p} might ask about {d}. Reply with the question only.",
    "explain": "Write one request asking an AI assistant to explain a concept from {d} in simple words. "
               "Reply with the request only.",
    "list": "Write one request asking an AI assistant for a list of tips, ideas or steps about {d}. "
            "Reply with the request only.",
    "creative": "Write one instruction asking an AI assistant to write a {form} about {d}. Reply with the "
                "instruction only.",
    "compare": "Write one question asking an AI assistant to compare two things from {d}. Reply with the "
               "question only.",
    "advice": "Write a short message in which {p} asks an AI assistant for advice about {d}. Reply with the "
              "message only.",
    "chat": "Write a casual, friendly message that {p} might send to a chatbot, touching on {d}. Reply with the "
            "message only.",
    "code": "Write one short programming task in {lang} that has to do with {d}. Reply with the task only.",
    "fact": "Write one factual trivia question about {d}. Reply with the question only.",
}
FORMS = ["short story", "poem", "haiku", "short speech", "letter", "dialogue", "product description",
         "news article", "diary entry", "song", "riddle", "joke", "blog post", "short essay", "scene description"]
PASSAGE = "Write two or three sentences about {d}, as {p} would write them. Reply with the text only."
REWRITES = [
    "Summarise this text in one sentence:", "Rewrite this text so that a ten-year-old understands it:",
    "Turn this text into a bulleted list:", "Rewrite this text in a more formal style:",
    "Rewrite this text in a casual, chatty style:", "Give this text a good title:",
    "Correct any mistakes in this text and improve its style:", "Rewrite this text in the past tense:",
    "Translate this text into Spanish:", "Translate this text into German:", "Expand this text into a paragraph:",
    "Write three questions that this text answers:", "What is the main idea of this text?",
    "Rewrite this text as a tweet:", "Make this text more persuasive:", "Write a reply to this text:",
]
CODE_TASKS = P.CODE_TASKS + [
    "parse command-line arguments", "count word frequencies in a file", "reverse the words in a sentence",
    "find all prime numbers below n with a sieve", "compute the moving average of a list",
    "serialise an object to JSON",
    "implement a binary tree insert", "check balanced parentheses", "convert a Roman numeral to an integer",
    "merge overlapping intervals", "compute the Levenshtein distance", "implement an LRU cache",
    "read a file line by line", "send an HTTP GET request", "shuffle a list", "find the median of a list",
]
LANGUAGES = P.LANGUAGES + ["Kotlin", "Swift", "PHP", "SQL", "Haskell", "Lua", "R", "C#"]
CODE_PHRASES = P.CODE_PHRASES + ["Write a {lang} function to {c}.", "Can you show how to {c} in {lang}?",
                                 "Explain how to {c} in {lang}, with a short example."]
NAMES = ["Amira", "Ben", "Chen", "Dara", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kofi", "Lena", "Mateo",
         "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tomas", "Uma", "Viktor", "Wen", "Yara", "Zoe"]
THINGS = ["apples", "stickers", "books", "marbles", "pencils", "cupcakes", "stamps", "coins", "shells", "cards",
          "eggs", "tickets", "plants", "balloons", "bottles"]
WORD_PROBLEMS = [
    "{a} has {x} {t}. {b} gives {a} {y} more, and then {a} gives away {z}. How many {t} does {a} have now?",
    "{a} buys {x} {t} at {p} dollars each and pays with a {m}-dollar note. How much change does {a} get?",
    "A box holds {y} {t}. How many boxes does {a} need for {x} {t}?",
    "{a} reads {y} pages a day. How many days does it take to read a book of {x} pages?",
    "A train travels at {y} km per hour. How far does it go in {z} hours?",
    "{a} and {b} share {x} {t} in the ratio {r1}:{r2}. How many does each get?",
    "A shop sells {t} for {p} dollars. During a sale the price drops by {pc}%. What is the new price?",
    "{a} saves {y} dollars a week. How many weeks until {a} has {x} dollars?",
    "The sum of two numbers is {x} and their difference is {z}. What are the numbers?",
    "A rectangle is {y} cm long and {z} cm wide. What are its area and its perimeter?",
    "{a} is {z} years older than {b}. In {y} years their ages will add up to {x}. How old is {b} now?",
    "A recipe needs {z} eggs for {y} people. How many eggs are needed for {x} people?",
]
PROBLEM_ASKS = ["", " Solve it step by step.", " Explain your reasoning.", " Show your working."]
FOLLOW_UPS = [
    "Can you give me an example?", "Can you make that shorter?", "Why is that?", "Can you explain that in more detail?",
    "Thanks! What should I do next?", "Can you put that in a table?", "What are the downsides?",
    "Can you summarise that in three bullet points?", "Is there another way to do it?", "How would you explain this "
    "to a child?", "Can you write that more formally?", "What is the most important point?", "Are you sure? Please "
    "check your answer.", "Great. Can you add a few more ideas?", "Could you rewrite it as a short poem?",
    "What would an expert add?", "Can you turn that into a checklist?", "Thanks, that helps!",
    "Can you give me a real-world application?", "What are common mistakes?", "Write code that does this.",
]


@dataclass(frozen=True)
class Seed:
    """A request the target answers *to write a prompt*: ``kind`` says what becomes of its answer."""

    text: str
    kind: str  # a SEED_KINDS key, or "passage"


def seed_requests(rng: random.Random, n: int, passage_share: float = 0.15) -> list[Seed]:
    """``n`` seed instructions over request kinds x domains x personas (and passages for rewriting)."""
    out = []
    kinds = sorted(SEED_KINDS)
    for _ in range(n):
        d, p = rng.choice(DOMAINS), rng.choice(PERSONAS)
        if rng.random() < passage_share:
            out.append(Seed(PASSAGE.format(d=d, p=p), "passage"))
            continue
        kind = rng.choice(kinds)
        text = SEED_KINDS[kind].format(d=d, p=p, form=rng.choice(FORMS), lang=rng.choice(LANGUAGES))
        out.append(Seed(text, kind))
    return out


def prompt_from_seed(seed: Seed, answer: str, rng: random.Random) -> str | None:
    """The training prompt made of the target's answer to a seed (None when unusable)."""
    text = answer.strip()
    if seed.kind == "passage":
        text = " ".join(text.split())
        if not 60 <= len(text) <= 600:
            return None
        return f"{rng.choice(REWRITES)}\n\n{text}"
    return P.clean_self_prompt(text)


def word_problem(rng: random.Random) -> str:
    a, b = rng.sample(NAMES, 2)
    x, y, z = rng.randint(12, 400), rng.randint(2, 30), rng.randint(2, 11)
    text = rng.choice(WORD_PROBLEMS).format(a=a, b=b, t=rng.choice(THINGS), x=x, y=y, z=z, p=rng.randint(2, 19),
                                            m=rng.choice([20, 50, 100]), r1=rng.randint(1, 4), r2=rng.randint(1, 5),
                                            pc=rng.choice([10, 15, 20, 25, 30, 40, 50]))
    return text + rng.choice(PROBLEM_ASKS)


def code_prompt(rng: random.Random) -> str:
    return rng.choice(CODE_PHRASES).format(c=rng.choice(CODE_TASKS), lang=rng.choice(LANGUAGES))


def direct_prompts(rng: random.Random, n: int) -> list[tuple[str, str]]:
    """``n`` (kind, prompt) pairs that need no self-instruct step."""
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.3:
            out.append(("math", word_problem(rng)))
        elif r < 0.55:
            out.append(("code", code_prompt(rng)))
        elif r < 0.8:
            out.append(("family", P.family_prompts(rng, 1)[0]))
        elif r < 0.95:
            out.append(("template", P.template_prompts(rng, 1)[0]))
        else:
            out.append(("stdlib", _stdlib_prompt(rng)))
    return out


@lru_cache(maxsize=1)
def _stdlib_snippets() -> list[tuple[str, str, str]]:
    return P.stdlib_snippets()


def _stdlib_prompt(rng: random.Random) -> str:
    name, src, doc = rng.choice(_stdlib_snippets())
    return rng.choice(P.STDLIB_TASKS).format(name=name, src=src, doc=doc[:700])


# ---- held-out separation ------------------------------------------------------------------------------


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i : i + n]) for i in range(len(w) - n + 1)}


@lru_cache(maxsize=4)
def _heldout_grams(n: int) -> tuple[tuple[str, frozenset], ...]:
    return tuple((h["id"], frozenset(ngrams(h["prompt"], n))) for h in P.load_heldout())


@lru_cache(maxsize=1)
def _heldout_words() -> list[set[str]]:
    return [P.content_words(h["prompt"]) for h in P.load_heldout()]


def heldout_overlap(prompt: str, n: int = 3) -> tuple[float, str]:
    """(largest share of a held-out prompt's word n-grams found in ``prompt``, that prompt's id)."""
    grams = ngrams(prompt, n)
    best = (0.0, "")
    for hid, h in _heldout_grams(n):
        if h:
            share = len(grams & h) / len(h)
            if share > best[0]:
                best = (share, hid)
    return best


def clear_of_heldout(prompt: str, limit: float = 0.25) -> tuple[bool, float, str]:
    """Whether ``prompt`` may be trained on: n-gram overlap below ``limit`` and not too close in content words."""
    share, hid = heldout_overlap(prompt)
    ok = share < limit and not P.too_close_to_heldout(prompt, _heldout_words())
    return ok, share, hid
