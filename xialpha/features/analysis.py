"""Turning one text into its list of terms: lowercase, token pattern, stop words, stemming."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable

STOP_WORD_LISTS = ("none", "english")
STEMMERS = ("none", "porter")


def make_analyzer(lowercase: bool, token_pattern: str, stop_words: str, stemming: str) -> Callable[[str], list[str]]:
    """A function text -> terms. Stop words (matched case-insensitively) are removed before stemming."""
    find_tokens = re.compile(token_pattern).findall
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


@lru_cache(maxsize=None)
def _stop_words(name: str) -> frozenset[str]:
    if name == "none":
        return frozenset()
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


@lru_cache(maxsize=None)
def _stemmer(name: str):
    """One PyStemmer stemmer per algorithm and process (stemmers cannot be pickled; they keep a cache)."""
    import Stemmer

    return Stemmer.Stemmer(name)
