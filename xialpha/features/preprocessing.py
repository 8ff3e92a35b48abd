"""`Preprocessing`: a frozen, hashable spec of the text -> TF-IDF vector mapping, with a stable id;
`FittedPreprocessing`: the spec fitted on training texts (vocabulary and idf), picklable.

Each text becomes its list of terms (`make_analyzer`): lowercase, token pattern, stop words,
stemming. Token patterns come from specs and from artefacts, which are untrusted: a pattern that
backtracks catastrophically (`(a|aa)+b` on a run of a's) would take minutes or years on one
document. They run on the `regex` engine (the standard `re` syntax and matches) with a time
budget per document (`budget_seconds`), past which the analyzer raises `PatternTooSlow`; the
patterns of WORD_RUNS (scikit-learn's default and its one-character variant: one character
class repeated, nothing to backtrack into) run on `re`, which tokenises them twice as fast, and
`Preprocessing.count` finds their tokens in an ASCII text as the runs of word characters that
bytes.split leaves once every other character is a space (twice as fast again).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from functools import cache, cached_property
from itertools import repeat
from typing import TYPE_CHECKING

from xialpha.errors import DataFailure, UserError, one_of

if TYPE_CHECKING:  # imported where texts are counted: a spec's preprocessings are checked without them
    import numpy as np
    import scipy.sparse as sp

TF_WEIGHTINGS = ("raw", "log", "binary")
ANALYZER_FIELDS = ("lowercase", "token_pattern", "stop_words", "stemming")  # what `count` depends on
IDF_WEIGHTINGS = ("none", "log", "smooth")
NORMS = ("l2", "none")
STOP_WORD_LISTS = ("none", "english")
STEMMERS = ("none", "porter")
BUDGET_SECONDS = 1.0  # per document, plus BUDGET_SECONDS_PER_CHARACTER for each of its characters
BUDGET_SECONDS_PER_CHARACTER = 1e-5
# {pattern: its shortest token}: a token is a whole run of word characters (letters, digits, "_")
WORD_RUNS = {r"(?u)\b\w\w+\b": 2, r"(?u)\b\w+\b": 1, r"\b\w\w+\b": 2, r"\b\w+\b": 1}
# bytes.translate's table: an ASCII word character kept, any other byte a space
_ASCII_WORDS = bytes(c if chr(c).isalnum() or chr(c) == "_" else 32 for c in range(128)) + b" " * 128


def stable_id(params: dict) -> str:
    """16 hex digits of the sha256 of the canonical JSON of `params` (keys sorted): the ids of frozen
    settings (preprocessings, kernels), equal across processes, machines and Python versions."""
    canonical = json.dumps(params, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Preprocessing:
    """How texts become feature vectors (one row per text, one column per kept term).

    lowercase: lower-case before tokenising. token_pattern: regular expression a token matches
    (at most one group). stop_words: "none" or "english" (scikit-learn's list). stemming: "none"
    or "porter" (PyStemmer). min_df: keep terms in at least this many training documents.
    max_df: keep terms in at most this fraction of training documents. tf: "raw" counts, "log"
    1 + ln(count), "binary" 1. idf: "none"; "log" ln(n/df) (Joachims eq. 2; a term in every training
    document gets weight 0); "smooth" ln((1+n)/(1+df)) + 1. norm: "l2" unit rows, or "none".
    """

    lowercase: bool = True
    token_pattern: str = r"(?u)\b\w\w+\b"
    stop_words: str = "none"
    stemming: str = "none"
    min_df: int = 1
    max_df: float = 1.0
    tf: str = "raw"
    idf: str = "log"
    norm: str = "l2"

    def __post_init__(self) -> None:
        if not isinstance(self.lowercase, bool):
            raise UserError(f"must be true or false, got {self.lowercase!r}", key="lowercase")
        _check_pattern(self.token_pattern)
        for name, allowed in (
            ("stop_words", STOP_WORD_LISTS),
            ("stemming", STEMMERS),
            ("tf", TF_WEIGHTINGS),
            ("idf", IDF_WEIGHTINGS),
            ("norm", NORMS),
        ):
            if getattr(self, name) not in allowed:
                raise UserError(one_of(getattr(self, name), allowed), key=name)
        min_df = self.min_df
        whole = isinstance(min_df, int) or (isinstance(min_df, float) and min_df.is_integer())
        if isinstance(min_df, bool) or not whole or min_df < 1:
            raise UserError(f"must be a whole number of documents >= 1, got {min_df!r}", key="min_df")
        object.__setattr__(self, "min_df", int(min_df))
        max_df = self.max_df
        if isinstance(max_df, bool) or not isinstance(max_df, (int, float)) or not 0 < max_df <= 1:
            raise UserError(f"must be a fraction of documents in (0, 1], got {max_df!r}", key="max_df")
        object.__setattr__(self, "max_df", float(max_df))

    @cached_property
    def id(self) -> str:
        """16 hex digits of the sha256 of params(): equal across processes and machines (computed
        once: a sweep plan asks for it for every configuration)."""
        return stable_id(self.params())

    def params(self) -> dict:
        """The fields as a flat dict {name: bool | int | float | str}, unprefixed."""
        return asdict(self)

    @cached_property
    def analyzer_id(self) -> str:
        """16 hex digits naming how texts become terms (lowercase, token pattern, stop words,
        stemming): preprocessings that differ only in min_df, max_df and weighting share it, and
        so share their term counts (`count`)."""
        return stable_id({name: getattr(self, name) for name in ANALYZER_FIELDS})

    def fit(self, texts: Iterable[str]) -> FittedPreprocessing:
        """Vocabulary and idf from the training `texts` only."""
        return self.fit_transform(texts)[0]

    def fit_transform(self, texts: Iterable[str]) -> tuple[FittedPreprocessing, sp.csr_matrix]:
        """The fitted preprocessing and the training matrix (CSR float64, shape (n_texts, vocabulary_size)).

        UserError when no term is kept (the vocabulary is empty: min_df above the number of
        documents, a token pattern that matches nothing, ...). The same steps as a corpus in
        partitions: `count`, `DocumentFrequencies.of`, `fit_frequencies`, `transform_counts`.
        """
        counts = self.count(texts)
        fitted = self.fit_frequencies(DocumentFrequencies.of(counts))
        return fitted, fitted.transform_counts(counts)

    def count(self, texts: Iterable[str]) -> TermCounts:
        """The term counts of `texts` in a vocabulary of their own (terms in order of appearance).
        With stemming: the counts of `unstemmed`, their terms stemmed (`TermCounts.stemmed`)."""
        if self.stemming != "none":
            return self.unstemmed().count(texts).stemmed(self.stemming)
        if self.token_pattern in WORD_RUNS:
            return _count_word_runs(texts, self)
        provisional: defaultdict[str, int] = defaultdict()
        provisional.default_factory = provisional.__len__
        counts = _count(texts, _analyzer(self), provisional.__getitem__, n_columns=None)
        return TermCounts(_terms(provisional), counts)

    def unstemmed(self) -> Preprocessing:
        """This preprocessing without stemming (itself when it has none): the terms its counts are
        stemmed from."""
        return self if self.stemming == "none" else replace(self, stemming="none")

    def fit_frequencies(self, frequencies: DocumentFrequencies) -> FittedPreprocessing:
        """Vocabulary (the terms min_df and max_df keep, sorted) and idf from the document
        frequencies of the training documents; UserError when no term is kept."""
        import numpy as np

        n_docs = frequencies.n_documents
        if n_docs == 0:
            raise DataFailure("no training documents to fit the preprocessing on", key="texts")
        df = frequencies.df
        kept = sorted(term for term, count in df.items() if self.min_df <= count <= self.max_df * n_docs)
        if not kept:
            found = (
                f"min_df={self.min_df} and max_df={self.max_df:g} keep none of the {len(df)} terms"
                if df
                else f"token_pattern {self.token_pattern!r} finds no term"
            )
            raise DataFailure(f"vocabulary is empty after preprocessing: {found} of {n_docs} training documents")
        idf = _idf(self.idf, np.fromiter((df[term] for term in kept), dtype=np.int64, count=len(kept)), n_docs)
        return FittedPreprocessing(
            spec=self, vocabulary={term: column for column, term in enumerate(kept)}, idf=idf, n_documents=n_docs
        )


@dataclass(frozen=True, eq=False)
class TermCounts:
    """Term counts of some documents in a vocabulary of their own: `terms` (v,) object array of
    str and `counts` CSR int64 (n_documents, v) with sorted indices; column c counts terms[c]."""

    terms: np.ndarray
    counts: sp.csr_matrix

    def rows(self, mask: np.ndarray) -> TermCounts:
        """The counts of the documents where boolean `mask` (n_documents,) is True."""
        return TermCounts(self.terms, self.counts[mask])

    def stemmed(self, stemming: str) -> TermCounts:
        """These counts with every term replaced by its stem (`stemming`, one of STEMMERS) and the
        columns of equal stems added: what counting the texts' stemmed tokens gives, terms in order
        of appearance too (the stop words are removed before stemming either way), for one stem
        per distinct term instead of one per token."""
        import numpy as np
        import scipy.sparse as sp

        provisional: defaultdict[str, int] = defaultdict()
        provisional.default_factory = provisional.__len__
        stems = _stemmer(stemming).stemWords(self.terms.tolist())
        column = np.fromiter(map(provisional.__getitem__, stems), dtype=np.int64, count=len(stems))
        X = self.counts
        merged = sp.csr_matrix(  # new arrays: summing the duplicates in place leaves these counts alone
            (X.data.copy(), column[X.indices], X.indptr.copy()), shape=(X.shape[0], len(provisional)), dtype=np.int64
        )
        merged.sum_duplicates()
        return TermCounts(_terms(provisional), merged)


@dataclass(frozen=True, eq=False)
class DocumentFrequencies:
    """df: {term: number of documents containing it} over n_documents training documents (terms
    with df 0 are left out), as one or several `TermCounts` give it; `merge` joins such counts."""

    n_documents: int
    df: dict[str, int]

    @classmethod
    def of(cls, counts: TermCounts) -> DocumentFrequencies:
        import numpy as np

        df = np.bincount(counts.counts.indices, minlength=len(counts.terms))
        present = np.flatnonzero(df)
        return cls(counts.counts.shape[0], dict(zip(counts.terms[present].tolist(), df[present].tolist())))

    @classmethod
    def merge(cls, parts: Iterable[DocumentFrequencies]) -> DocumentFrequencies:
        """The frequencies over the documents of all `parts` together."""
        parts = sorted(parts, key=lambda part: len(part.df), reverse=True)
        df = dict(parts[0].df) if parts else {}  # the largest copied, the others added to it
        for part in parts[1:]:
            for term, count in part.df.items():
                df[term] = df.get(term, 0) + count
        return cls(sum(part.n_documents for part in parts), df)


@dataclass(frozen=True, eq=False)
class FittedPreprocessing:
    """A `Preprocessing` fitted on n_documents training texts: term -> column and idf per column."""

    spec: Preprocessing
    vocabulary: dict[str, int]
    idf: np.ndarray | None
    n_documents: int

    @property
    def vocabulary_size(self) -> int:
        return len(self.vocabulary)

    @property
    def feature_names(self) -> list[str]:
        """Terms in column order (sorted)."""
        return sorted(self.vocabulary, key=self.vocabulary.__getitem__)

    def transform(self, texts: Iterable[str]) -> sp.csr_matrix:
        """CSR float64 matrix of shape (n_texts, vocabulary_size); unseen terms are ignored."""
        lookup = self.vocabulary.get
        counts = _count(texts, _analyzer(self.spec), lookup, n_columns=self.vocabulary_size)
        return self.weight(counts)

    def transform_counts(self, counts: TermCounts) -> sp.csr_matrix:
        """What `transform` gives for the texts `counts` counted (in their own vocabulary):
        their columns mapped to this vocabulary (terms outside it dropped), then weighted."""
        return self.weight(self.vocabulary_counts(counts))

    def vocabulary_counts(self, counts: TermCounts) -> sp.csr_matrix:
        """The counts of `counts`' documents in this vocabulary: CSR int64 (n_documents,
        vocabulary_size) with sorted indices (terms outside it dropped); rows can be taken from it
        before `weight`, which weights each row alone."""
        import numpy as np
        import scipy.sparse as sp

        column = np.fromiter(
            map(self.vocabulary.get, counts.terms.tolist(), repeat(-1)), dtype=np.int64, count=len(counts.terms)
        )
        X = counts.counts
        mapped = column[X.indices]
        keep = mapped >= 0
        indptr = np.concatenate([[0], np.cumsum(keep)])[X.indptr]
        kept = sp.csr_matrix((X.data[keep], mapped[keep], indptr), shape=(X.shape[0], self.vocabulary_size))
        kept.sort_indices()
        return kept

    def weight(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        """Term counts in this vocabulary (CSR, (n, vocabulary_size)) weighted: tf, idf, norm, as
        `transform` weights them; CSR float64."""
        import numpy as np

        X = counts.astype(np.float64)
        if self.spec.tf == "log":
            np.log(X.data, out=X.data)
            X.data += 1.0
        elif self.spec.tf == "binary":
            X.data[:] = 1.0
        if self.idf is not None:
            X.data *= self.idf[X.indices]
            X.eliminate_zeros()
        if self.spec.norm == "l2":
            norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
            norms[norms == 0] = 1.0
            X.data /= np.repeat(norms, np.diff(X.indptr))
        return X


def _analyzer(spec: Preprocessing):
    return make_analyzer(spec.lowercase, spec.token_pattern, spec.stop_words, spec.stemming)


def _texts(texts: Iterable[str]) -> Iterable[tuple[int, str]]:
    """(number, text) of each text; UserError for one string or an item that is not one."""
    if isinstance(texts, str):
        raise UserError("expected a list of texts, got one string", key="texts")
    for number, text in enumerate(texts):
        if not isinstance(text, str):
            raise UserError(f"item {number} is a {type(text).__name__}, expected a string", key="texts")
        yield number, text


def _count_word_runs(texts: Iterable[str], spec: Preprocessing) -> TermCounts:
    """`Preprocessing.count` for a token pattern of WORD_RUNS: each text's runs of word characters
    (an ASCII text's split by bytes.split, any other's found by the pattern), counted in order of
    appearance; then the terms the analyzer would have dropped token by token (shorter than the
    pattern's shortest token, or stop words) dropped as columns, the others keeping their order."""
    import numpy as np

    find_tokens = _finder(spec.token_pattern)
    provisional: defaultdict[bytes, int] = defaultdict()
    provisional.default_factory = provisional.__len__
    column_of = provisional.__getitem__
    indices: list[int] = []
    indptr = [0]
    for _, text in _texts(texts):
        if spec.lowercase:
            text = text.lower()
        if text.isascii():
            tokens = text.encode("ascii").translate(_ASCII_WORDS).split()
        else:
            tokens = [token.encode("utf-8") for token in find_tokens(text)]
        indices.extend(map(column_of, tokens))
        indptr.append(len(indices))
    terms = [term.decode("utf-8") for term in provisional]
    shortest, stop = WORD_RUNS[spec.token_pattern], _stop_words(spec.stop_words)
    kept = np.fromiter(
        (len(term) >= shortest and term.lower() not in stop for term in terms), dtype=bool, count=len(terms)
    )
    columns = np.asarray(indices, dtype=np.int64)
    if not kept.all():
        counted = kept[columns]
        indptr = np.concatenate([[0], np.cumsum(counted)])[np.asarray(indptr, dtype=np.int64)]
        columns = (np.cumsum(kept) - 1)[columns[counted]]
        terms = [term for term, keep in zip(terms, kept) if keep]
    kept_terms = np.empty(len(terms), dtype=object)
    kept_terms[:] = terms
    return TermCounts(kept_terms, _counts_matrix(columns, indptr, len(terms)))


def _count(texts: Iterable[str], analyze, column_of_term, n_columns: int | None) -> sp.csr_matrix:
    """Term counts: CSR int64 with sorted indices; terms for which `column_of_term` gives None are dropped."""
    indices: list[int] = []
    indptr = [0]
    for number, text in _texts(texts):
        try:
            terms = analyze(text)
        except PatternTooSlow as exc:
            raise UserError(
                f"{exc} on document {number + 1} ({len(text):,} characters): the pattern backtracks too "
                "much; use a simpler one"
            ) from None
        columns = map(column_of_term, terms)
        indices.extend(columns if n_columns is None else (c for c in columns if c is not None))
        indptr.append(len(indices))
    width = n_columns if n_columns is not None else max(indices, default=-1) + 1
    return _counts_matrix(indices, indptr, width)


def _counts_matrix(columns, indptr, width: int) -> sp.csr_matrix:
    """CSR int64 (len(indptr) - 1, width) with sorted indices: row i counts its tokens'
    columns[indptr[i]:indptr[i + 1]]."""
    import numpy as np
    import scipy.sparse as sp

    counts = sp.csr_matrix(
        (
            np.ones(len(columns), dtype=np.int64),
            np.asarray(columns, dtype=np.int64),
            np.asarray(indptr, dtype=np.int64),
        ),
        shape=(len(indptr) - 1, width),
    )
    counts.sum_duplicates()
    return counts


def _terms(provisional: dict[str, int]) -> np.ndarray:
    """(v,) object array of the terms of a vocabulary {term: column} built in column order."""
    import numpy as np

    terms = np.empty(len(provisional), dtype=object)
    terms[:] = list(provisional)
    return terms


def _idf(kind: str, df: np.ndarray, n_docs: int) -> np.ndarray | None:
    import numpy as np

    if kind == "none":
        return None
    df = df.astype(np.float64)
    if kind == "log":
        return np.log(n_docs / df)
    return np.log((1.0 + n_docs) / (1.0 + df)) + 1.0


def _check_pattern(pattern: object) -> None:
    if not isinstance(pattern, str) or not pattern:
        raise UserError(f"must be a non-empty regular expression, got {pattern!r}", key="token_pattern")
    import regex

    try:
        groups = compile_pattern(pattern).groups
    except regex.error as exc:
        raise UserError(f"not a valid regular expression ({exc})", key="token_pattern") from None
    if groups > 1:
        raise UserError(f"has {groups} groups, at most one is allowed", key="token_pattern")


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
    """text -> the pattern's matches: on `re` for WORD_RUNS, else on `regex` within
    `budget_seconds(text)` (PatternTooSlow past it)."""
    if token_pattern in WORD_RUNS:
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
