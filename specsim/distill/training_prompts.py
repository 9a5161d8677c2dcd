"""Prompt material for the corpus (instruct.py mixes it into each round), kept apart from the held-out set.

1. Templates: task phrasings crossed with a topic list chosen apart from the held-out prompts
   (``assets/prompts/heldout.json``), and coding tasks crossed with languages.
2. Task families in the held-out *domains* (lists, stories, scenes, explanations, rewrites) with their own
   subjects and tasks.
3. Python's own standard library: functions and docstrings parsed from the installed ``.py`` sources,
   for code-reading tasks (explain, comment, show a call, list the steps).

:func:`too_close_to_heldout` drops any prompt whose content words overlap a held-out prompt's, so a
self-written question cannot slip a held-out task into training.
"""

from __future__ import annotations

import ast
import random
import re
import sysconfig
from pathlib import Path

from specsim.core.prompt_sets import heldout_items

TOPICS = [
    "volcanoes", "coral reefs", "the printing press", "chess openings", "honeybees", "glaciers", "Roman aqueducts",
    "jazz music", "electric cars", "composting", "origami", "submarines", "the first moon landing", "earthquakes",
    "coffee roasting", "knitting", "windmills", "penguins", "the early internet", "solar panels", "pottery",
    "wild mushrooms", "the Silk Road", "hot air balloons", "marathon running", "public libraries", "elephants",
    "mechanical clocks", "suspension bridges", "plastic recycling", "old sea charts", "comets", "growing tomatoes",
    "rainforests", "medieval castles", "dinosaurs", "the number pi", "chocolate making", "black holes",
    "ancient Egypt", "the Olympic Games", "typewriters", "sourdough starters", "wolves", "hydroelectric dams",
    "board games", "the human heart", "tornadoes", "street food", "lunar eclipses", "saltwater aquariums",
    "the Renaissance", "sign language", "bird migration", "cybersecurity", "urban gardening", "the metric system",
    "skateboarding", "tidal energy", "ballet", "the Great Wall of China", "octopuses", "fermentation",
    "national parks", "video game design", "cryptography", "ice hockey", "the Amazon river", "bonsai trees",
    "early aviation", "recycling electronics", "minimalist living", "podcasts", "the periodic table", "sharks",
    "rock climbing", "architecture of cathedrals", "Antarctica", "volunteering", "spreadsheets",
]

TOPIC_TASKS = [
    "Tell me about {t}.", "What should a beginner know about {t}?", "Give three interesting facts about {t}.",
    "Write a poem about {t}.", "Write a diary entry by someone who spends a day around {t}.",
    "What are the pros and cons of {t}?", "Why do people find {t} fascinating?",
    "Write a blog post introduction about {t}.", "Create a quiz with three questions about {t}.",
    "What is the history of {t}?", "Describe {t} to someone who has never heard of it.",
    "What are common misconceptions about {t}?", "Write a tweet about {t}.",
    "Plan a one-day lesson for students about {t}.", "What careers are connected to {t}?",
    "Write a dialogue between two friends arguing about {t}.", "Give me a fun fact about {t} and explain it.",
    "What would the world look like without {t}?", "Write a limerick about {t}.",
    "Compare {t} with {u}.", "Write a product description for a book about {t}.",
    "Outline an essay about {t}.", "What questions would a scientist ask about {t}?",
    "Write a short news report about a discovery related to {t}.",
]

CODE_TASKS = [
    "compute the n-th Fibonacci number", "merge two sorted lists", "read a CSV file and print each row",
    "count the vowels in a string", "flatten a nested list", "compute the greatest common divisor of two numbers",
    "test whether a number is prime", "do a binary search in a sorted array", "multiply two matrices",
    "parse a date string like 2024-05-17", "print FizzBuzz from 1 to 100", "convert Celsius to Fahrenheit",
    "implement a stack with push and pop", "implement a queue using two stacks", "remove duplicates from a list",
    "find the largest element of an array", "sort a list of people by age", "compute a factorial recursively",
    "check whether two strings are anagrams", "convert a number to binary", "sum the digits of an integer",
    "find the second smallest number in a list", "read a JSON file and print a field", "generate a random password",
    "compute the average of a list of numbers", "rotate an array by k positions", "transpose a matrix",
    "validate an email address with a regular expression", "download a web page", "measure how long a function takes",
]
LANGUAGES = ["Python", "JavaScript", "C", "C++", "Java", "Go", "Rust", "TypeScript", "Ruby", "bash"]
CODE_PHRASES = ["Implement a function to {c} in {lang}.", "Show me {lang} code to {c}.", "How do I {c} in {lang}?",
                "Write a {lang} program to {c}, with comments."]

STDLIB_TASKS = [
    "Explain what this Python function does:\n\n```python\n{src}\n```",
    "Add helpful comments to this code:\n\n```python\n{src}\n```",
    "Show an example of calling this function and what it returns:\n\n```python\n{src}\n```",
    "List the steps this function performs:\n\n```python\n{src}\n```",
    "Is there a bug or an edge case in this code?\n\n```python\n{src}\n```",
    "Here is documentation from Python's standard library. Explain it in plain English:\n\n{doc}",
    "What would a programmer use `{name}` for? Its documentation says:\n\n{doc}",
]

# Task families in the held-out domains (lists, stories, scenes, explanations, rewrites) with their own
# subjects and their own tasks: a held-out task ("translate into French", "more polite", ...) never appears.
ACTIVITIES = [
    "learning a new language", "running a first 5k race", "organising a small kitchen", "starting a balcony garden",
    "writing a cover letter", "reducing screen time", "training a puppy", "studying for exams",
    "hosting a dinner party", "moving to a new city", "learning to play the guitar", "maintaining a bicycle",
    "saving energy at home", "planning a road trip", "making friends at a new school", "working from home",
    "preparing for a long flight", "taking photos with a phone", "starting a book club", "learning to swim",
    "keeping a journal", "cooking for a large family", "painting a bedroom", "volunteering at an animal shelter",
    "teaching a child to read", "running a yard sale", "learning to code", "decluttering a wardrobe",
]
LIST_TASKS = [
    "Give me {n} tips for {a}.", "What are {n} common mistakes people make when {a}?",
    "Make a step-by-step plan for {a}.", "Write a numbered list of {n} ideas for {a}.",
    "What do I need for {a}? Give a short list.", "Give {n} reasons to try {a}.",
    "Break {a} down into {n} simple steps.", "What are the first {n} things to do when {a}?",
]
CHARACTERS = [
    "a retired astronaut", "a shy dragon", "a lost umbrella", "two rival bakers", "a girl who collects maps",
    "an old fisherman", "a talking cat", "a time-travelling librarian", "a nervous wizard apprentice", "a snowman",
    "a street musician", "a tiny mouse with big dreams", "a forgetful inventor", "a young goalkeeper",
    "a ghost who is afraid of the dark", "a mail carrier on a distant island",
]
EVENTS = [
    "discovers a hidden door", "has to cross a frozen river", "loses their voice before a big show",
    "makes friends with a storm", "finds a map inside an old book", "wins a contest by accident",
    "must deliver a letter before sunset", "wakes up in a different century", "gets stuck in an elevator",
    "plants a seed that grows overnight", "receives a mysterious phone call", "has to babysit a baby dinosaur",
]
STORY_TASKS = [
    "Write a short story about {c} who {e}.", "Write a fairy tale about {c} who {e}.",
    "Write the first paragraph of an adventure story about {c} who {e}.",
    "Tell a funny story about {c} who {e}.", "Write a story for children about {c} who {e}.",
]
SCENES = [
    "a busy market at noon", "a snowy forest", "an empty classroom after school", "a mountain lake in summer",
    "a crowded subway car", "a garden after a thunderstorm", "a small bakery before opening",
    "a football stadium on match day", "an attic full of old boxes", "a beach in winter", "a train station at midnight",
    "a grandmother's kitchen", "a city rooftop at sunset", "a foggy country road", "a hospital waiting room",
]
SCENE_TASKS = [
    "Paint a picture in words of {s}.", "Write a vivid description of {s}.",
    "Describe the sounds and smells of {s}.", "Write a few lines of poetic prose about {s}.",
]
THINGS = [
    "a microwave oven", "a camera lens", "an elevator", "a thermostat", "a compass", "a solar cell", "wifi",
    "a credit card payment", "a zipper", "GPS", "a rechargeable battery", "a lock and key", "an airplane wing",
    "a touchscreen", "a fire extinguisher", "a hearing aid", "a search engine", "a traffic light",
]
PHENOMENA = [
    "leaves change colour in autumn", "cats purr", "people yawn", "bread rise", "ice float on water",
    "stars twinkle", "our ears pop on planes", "rainbows appear", "metal feel cold", "we get hiccups",
    "the moon change shape", "rivers bend", "some people get seasick",
]
EXPLAIN_TASKS = ["Explain how {x} works.", "How does {x} work, step by step?",
                 "What is inside {x}, and what does it do?"]
WHY_TASKS = ["Why do {p}?", "What makes {p}? Explain briefly."]
SENTENCES = [
    "The library will close early on Friday because of the holiday.", "Our team finished the project two days late.",
    "I think we should take the bus instead of driving.", "The new cafe on the corner sells excellent pastries.",
    "Please remember to water the plants while I am away.", "The concert was cancelled due to heavy rain.",
    "She practised the piano every evening for a month.", "The software update fixed the login problem.",
    "We are looking for volunteers to help at the school fair.", "The museum has a new exhibition about ancient maps.",
    "My brother fixed the broken fence in the garden.", "The price of train tickets went up this year.",
    "Children learn faster when they are having fun.", "The hikers reached the summit just before the storm.",
    "The report shows that sales grew by ten percent.", "He forgot his keys and had to wait outside for an hour.",
    "The river flooded the fields after a week of rain.", "Our neighbours adopted two kittens last weekend.",
]
REWRITE_TASKS = [
    "Rewrite this sentence in the passive voice: \"{s}\"", "Make this sentence sound more casual: \"{s}\"",
    "Shorten this sentence as much as possible: \"{s}\"", "Translate into Spanish: \"{s}\"",
    "Translate into German: \"{s}\"", "Paraphrase this sentence: \"{s}\"",
    "Turn this statement into a question: \"{s}\"", "Expand this into a short paragraph: \"{s}\"",
    "Make this sound more exciting: \"{s}\"", "Write a reply to this message: \"{s}\"",
]


def family_prompts(rng: random.Random, n: int) -> list[str]:
    """``n`` prompts from the task families above (distinct, in random order)."""
    pool = [t.format(a=a, n=rng.choice([3, 4, 5, 6, 8, 10])) for t in LIST_TASKS for a in ACTIVITIES]
    pool += [t.format(c=c, e=e) for t in STORY_TASKS for c in CHARACTERS for e in rng.sample(EVENTS, 3)]
    pool += [t.format(s=s) for t in SCENE_TASKS for s in SCENES]
    pool += [t.format(x=x) for t in EXPLAIN_TASKS for x in THINGS]
    pool += [t.format(p=p) for t in WHY_TASKS for p in PHENOMENA]
    pool += [t.format(s=s) for t in REWRITE_TASKS for s in SENTENCES]
    pool = sorted(set(pool))
    rng.shuffle(pool)
    return pool[:n]


_STOP = set("a an the of to in on and or for with is are be what how why who when write give me your this that "
            "it its as by from into about some few short very one two three you can do does i my".split())


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if w not in _STOP and len(w) > 2}


def load_heldout() -> list[dict]:
    """The held-out prompts with their ids and domains: ``[{"id", "domain", "prompt"}, ...]``."""
    return heldout_items()


def too_close_to_heldout(prompt: str, heldout: list[set[str]], limit: float = 0.5) -> bool:
    """True when the prompt shares at least ``limit`` of some held-out prompt's content words."""
    words = content_words(prompt)
    return any(h and len(words & h) / len(h) >= limit for h in heldout)


def template_prompts(rng: random.Random, n: int) -> list[str]:
    """``n`` prompts from the topic and coding templates (distinct, in random order)."""
    pool = []
    for t in TOPICS:
        for task in TOPIC_TASKS:
            pool.append(task.format(t=t, u=rng.choice(TOPICS)))
    for c in CODE_TASKS:
        for lang in LANGUAGES:
            pool.append(rng.choice(CODE_PHRASES).format(c=c, lang=lang))
    rng.shuffle(pool)
    return pool[:n]


_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """The lines with their ends, split as ast splits them (on \\r\\n, \\r and \\n only)."""
    return _LINES.findall(text)


def source_segment(lines: list[str], node: ast.AST) -> str | None:
    """``ast.get_source_segment`` from the file's lines split once (its offsets count UTF-8 bytes)."""
    if getattr(node, "end_lineno", None) is None:
        return None
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset:node.end_col_offset].decode()
    head = lines[first].encode()[node.col_offset:].decode()
    tail = lines[last].encode()[:node.end_col_offset].decode()
    return "".join([head, *lines[first + 1:last], tail])


def stdlib_snippets(max_chars: int = 900, max_files: int | None = None) -> list[tuple[str, str, str]]:
    """(name, source, docstring) of small documented functions in the installed standard library."""
    root = Path(sysconfig.get_paths()["stdlib"])
    out = []
    for path in sorted(root.glob("*.py"))[:max_files]:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
            text = path.read_text(encoding="utf-8")
        except (SyntaxError, UnicodeDecodeError, OSError):
            continue
        lines = split_lines(text)  # once per file: ast.get_source_segment splits the whole file every call
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                doc = ast.get_docstring(node)
                src = source_segment(lines, node)
                if doc and src and 120 < len(src) <= max_chars and len(doc) > 40:
                    out.append((f"{path.stem}.{node.name}", src, doc))
    return out


def clean_self_prompt(text: str) -> str | None:
    """The question the target wrote, or None when it is unusable."""
    line = text.strip().split("\n")[0].strip().strip('"').strip()
    return line if 15 <= len(line) <= 300 else None


def filter_heldout(prompts: list[str]) -> tuple[list[str], int]:
    """Drop prompts too close to a held-out one; returns (kept, number dropped)."""
    held = [content_words(p["prompt"]) for p in load_heldout()]
    kept = [p for p in prompts if not too_close_to_heldout(p, held)]
    return kept, len(prompts) - len(kept)
