"""Turning one text into its list of terms: lowercase, token pattern, stop words, stemming.

Token patterns come from specs and from artefacts, which are untrusted: a pattern that
backtracks catastrophically (`(a|aa)+b` on a run of a's) would take minutes or years on one
document. They run on the `regex` engine (the standard `re` syntax and matches) with a time
budget per document (`budget_seconds`), past which the analyzer raises `PatternTooSlow`; the
patterns of LINEAR_PATTERNS (scikit-learn's default and its one-character variant: one character
class repeated, nothing to backtrack into) run on `re`, which tokenises them twice as fast.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

STOP_WORD_LISTS = ("none", "english")
STEMMERS = ("none", "porter")
BUDGET_SECONDS = 1.0  # per document, plus BUDGET_SECONDS_PER_CHARACTER for each of its characters
BUDGET_SECONDS_PER_CHARACTER = 1e-5
LINEAR_PATTERNS = frozenset({r"(?u)\b\w\w+\b", r"(?u)\b\w+\b", r"\b\w\w+\b", r"\b\w+\b"})


class PatternTooSlow(Exception):
    """The token pattern ran past its time budget on one document (the caller names the document)."""

    def __init__(self, pattern: str, seconds: float):
        super().__init__(f"token_pattern {pattern!r}: matching took longer than its budget of {seconds:.3g} s")


def budget_seconds(text: str) -> float:
    """The time the token pattern may take on `text`: seconds, growing with its length."""
    return BUDGET_SECONDS + BUDGET_SECONDS_PER_CHARACTER * len(text)


def compile_pattern(pattern: str):
    """`pattern` compiled by the `regex` engine in its `re`-compatible mode (regex.error if invalid)."""
    import regex

    return regex.compile(pattern, flags=regex.VERSION0)


def make_analyzer(lowercase: bool, token_pattern: str, stop_words: str, stemming: str) -> Callable[[str], list[str]]:
    """A function text -> terms. Stop words (matched case-insensitively) are removed before
    stemming. PatternTooSlow when the token pattern runs past `budget_seconds` of a text."""
    find_tokens = _finder(token_pattern)
    stop = _stop_words(stop_words)
    stem = _stemmer(stemming).stemWords if stemming != "none" else None

    def analyze(text: str) -> list[str]:
        tokens = find_tokens(text.lower() if lowercase else text)
        if stop and lowercase:
            tokens = [token for token in tokens if token not in stop]
        elif stop:
            tokens = [token for token in tokens if token.lower() not in stop]
        return stem(tokens) if stem else tokens

    return analyze


def _finder(token_pattern: str) -> Callable[[str], list[str]]:
    """text -> the pattern's matches: on `re` for LINEAR_PATTERNS, else on `regex` within
    `budget_seconds(text)` (PatternTooSlow past it)."""
    if token_pattern in LINEAR_PATTERNS:
        return re.compile(token_pattern).findall
    find_tokens = compile_pattern(token_pattern).findall

    def find(text: str) -> list[str]:
        try:
            return find_tokens(text, timeout=budget_seconds(text))
        except TimeoutError:
            raise PatternTooSlow(token_pattern, budget_seconds(text)) from None

    return find


@cache
def _stop_words(name: str) -> frozenset[str]:
    if name == "none":
        return frozenset()
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


@cache
def _stemmer(name: str):
    """One PyStemmer stemmer per algorithm and process (stemmers cannot be pickled; they keep a cache)."""
    import Stemmer

    return Stemmer.Stemmer(name)
