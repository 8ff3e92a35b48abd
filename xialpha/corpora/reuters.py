"""Reuters-21578 (Distribution 1.0) SGML: the 22 reut2-NNN.sgm files in a directory or a tar archive.

Each story becomes one document: id = NEWID, text = TITLE + BODY (stories without a BODY keep their
TITLE and the rest of their TEXT; the "Blah blah blah." placeholder of TYPE="BRIEF" stories is
dropped), labels = TOPICS categories, timestamp = DATE (NaT where it does not parse), split = "train"
or "test" from LEWISSPLIT. The files are latin-1; SGML character entities are resolved and
control characters removed.

A file cut short or corrupted inside a story (a <REUTERS> without its </REUTERS>, or text after
the last story) is refused, naming the file and the story, never half-loaded.
"""

from __future__ import annotations

import html
import re
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import NamedTuple

import numpy as np

from xialpha.corpora.corpus import Corpus
from xialpha.corpora.parts import Census, Part, PartedLoader, RawPart
from xialpha.corpora.sources import existing_path, iter_tree_files, read_regular_file, tree_files
from xialpha.errors import UserError, one_of

SGML_FILE = re.compile(r"reut2-\d{3}\.sgm$")
SPLITS = ("modapte", "all")

# The patterns scan a file once (a corpus file is untrusted input): no tag spans a "<" (so "<<<<..."
# without ">" is not rescanned from every "<"), an attribute name starts a word, and an element's
# content ends at its closing tag or at the next opening one (where a pattern of ".*?" rescanned
# the rest of the text from every opening tag that is never closed)
_STORY_OPEN = re.compile(r"<REUTERS(?P<attrs>[^<>]*+)>")
_STORY_CLOSE = "</REUTERS>"
_STORY_START = re.compile(r"<REUTERS(?P<attrs>[^<>]*+)")
_ATTR = re.compile(r'(?<!\w)(\w++)="([^"]*+)"')
_TOPICS = re.compile(r"<TOPICS>((?:[^<]++|<(?!/?TOPICS>))*+)</TOPICS>")
_D = re.compile(r"<D>((?:[^<]++|<(?!/?D>))*+)</D>")
_DATE = re.compile(r"<DATE>\s*(\d{1,2})-([A-Za-z]{3})-(\d{4})\s+(\d{1,2}):(\d{2}):(\d{2})")
_TEXT = re.compile(r"<TEXT[^<>]*+>((?:[^<]++|<(?!/?TEXT\b))*+)</TEXT>")
_TITLE = re.compile(r"<TITLE>((?:[^<]++|<(?!/?TITLE>))*+)</TITLE>")
_BODY = re.compile(r"<BODY>((?:[^<]++|<(?!/?BODY>))*+)</BODY>")
_NOT_TEXT = re.compile(r"<(TITLE|DATELINE|AUTHOR)>(?:[^<]++|<(?!/?\1>))*+</\1>")
_TAG = re.compile(r"<[^<>]++>")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_BRIEF_PLACEHOLDER = "Blah blah blah."
_LEWIS_TO_SPLIT = {"TRAIN": "train", "TEST": "test", "NOT-USED": "not-used"}
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}


def reuters_parts(*, path, split: str, follow_symlinks: bool) -> list[Part]:
    """One part per reut2-NNN.sgm file of a directory, in name order; an archive is one part (a
    compressed stream is read in one pass)."""
    if split not in SPLITS:
        raise UserError(one_of(split, SPLITS), key="split")
    root = existing_path(path)
    settings = {"path": str(root), "split": split, "follow_symlinks": follow_symlinks}
    if not root.is_dir():
        return [Part("reuters21578", str(root), settings, where=("",))]
    files = [
        (str(relative), str(target)) for relative, target in tree_files(root, follow_symlinks) if _wanted(relative)
    ]
    if not files:
        raise UserError(f"no reut2-NNN.sgm files in {root}", key="path")
    return [
        Part("reuters21578", str(root / relative), settings, where=(relative, target)) for relative, target in files
    ]


def read_reuters_part(part: Part) -> RawPart:
    """The stories of one SGML file (or of every file in an archive)."""
    root, split = Path(part.args["path"]), part.args["split"]
    relative = part.where[0]
    if relative:  # the file to open (a symbolic link's target, checked when the parts were planned)
        files = [(relative, read_regular_file(part.where[1], f"path: {root / relative}"))]
    else:
        files = list(iter_tree_files(root, wanted=_wanted, follow_symlinks=part.args["follow_symlinks"]))
        if not files:
            raise UserError(f"no reut2-NNN.sgm files in {root}", key="path")
    ids, texts, labels, times, splits = [], [], [], [], []
    for name, data in files:
        for story in _complete_stories(data.decode("latin-1"), root / name):
            attrs = dict(_ATTR.findall(story.attrs))
            if split == "modapte" and not (
                attrs.get("TOPICS") == "YES" and attrs.get("LEWISSPLIT") in ("TRAIN", "TEST")
            ):
                continue
            body = story.body
            ids.append(attrs.get("NEWID", ""))
            texts.append(_story_text(body))
            topics = _TOPICS.search(body)
            labels.append(frozenset(_clean(d) for d in _D.findall(topics[1])) if topics else frozenset())
            times.append(_story_time(body))
            splits.append(_LEWIS_TO_SPLIT.get(attrs.get("LEWISSPLIT", ""), "not-used"))
    corpus = Corpus(
        ids=np.array(ids, dtype=str),
        texts=texts,
        labels=labels,
        name=f"reuters21578-{split}",
        timestamps=np.array(times, dtype="datetime64[s]"),
        splits=np.array(splits, dtype=str),
    )
    return RawPart(corpus, len(ids))


def check_reuters_parts(parts: list[Part], censuses: list[Census]) -> None:
    """UserError when no file holds a story of the chosen split."""
    if not sum(sum(c.split_sizes.values()) for c in censuses):
        raise UserError(f"no Reuters stories in the reut2-NNN.sgm files of {parts[0].args['path']}", key="path")


def _wanted(relative) -> bool:
    return bool(SGML_FILE.search(PurePosixPath(relative).name))


class _Story(NamedTuple):
    """One <REUTERS attrs>body</REUTERS> story of an SGML file, at sgml[start:end]."""

    attrs: str
    body: str
    start: int
    end: int


def _stories(sgml: str) -> list[_Story]:
    """Each <REUTERS ...> tag and the text up to the first </REUTERS> after it, one story after the
    other (found with str.find: a lazy regex over every story's text took 7x as long)."""
    stories, position = [], 0
    while (opening := _STORY_OPEN.search(sgml, position)) is not None:
        closing = sgml.find(_STORY_CLOSE, opening.end())
        if closing < 0:
            break
        position = closing + len(_STORY_CLOSE)
        stories.append(_Story(opening["attrs"], sgml[opening.end() : closing], opening.start(), position))
    return stories


def _complete_stories(sgml: str, file) -> list[_Story]:
    """The <REUTERS> stories of one file; UserError naming the file and the story where one is
    not closed (the file was cut short or corrupted) or text other than white space follows the
    last story."""
    stories = _stories(sgml)
    starts = list(_STORY_START.finditer(sgml))
    if not starts:
        raise UserError(f"{file} holds no <REUTERS> story (not a Reuters-21578 SGML file)", key="path")
    for index, start in enumerate(starts):  # story i must start at start i and end before start i + 1
        if (
            index >= len(stories)
            or stories[index].start != start.start()
            or (index + 1 < len(starts) and stories[index].end > starts[index + 1].start())
        ):
            newid = dict(_ATTR.findall(start["attrs"])).get("NEWID", "?")
            line = sgml.count("\n", 0, start.start()) + 1
            raise UserError(
                f"{file}: story {index + 1} (NEWID={newid}, line {line}) has no </REUTERS>: "
                "the file is truncated or corrupt",
                key="path",
            )
    tail = sgml[stories[-1].end :]
    if tail.strip():
        newid = dict(_ATTR.findall(stories[-1].attrs)).get("NEWID", "?")
        raise UserError(
            f"{file}: text after the last complete story (NEWID={newid}) is not a story: "
            f"{tail.strip()[:40]!r}; the file is truncated or corrupt",
            key="path",
        )
    return stories


def _story_text(body: str) -> str:
    """TITLE + BODY of one story, or TITLE + the rest of TEXT where there is no BODY."""
    text = _TEXT.search(body)
    if text is None:
        return ""
    inner = text[1]
    title = _TITLE.search(inner)
    parts = [title[1]] if title else []
    story_body = _BODY.search(inner)
    if story_body:
        parts.append(story_body[1])
    else:
        rest = _TAG.sub(" ", _NOT_TEXT.sub(" ", inner))
        parts.append(rest.replace(_BRIEF_PLACEHOLDER, " "))
    return _clean("\n".join(parts))


def _clean(sgml: str) -> str:
    """Entities resolved, control characters removed, surrounding white space stripped."""
    return _CONTROL.sub("", html.unescape(sgml)).strip()


def _story_time(body: str) -> np.datetime64:
    match = _DATE.search(body)
    if match is None:
        return np.datetime64("NaT")
    day, month, year, hour, minute, second = match.groups()
    try:  # what strptime's "%d %b %Y %H:%M:%S" reads, at a tenth of its cost
        moment = datetime(int(year), _MONTHS[month.lower()], int(day), int(hour), int(minute), int(second))
    except (KeyError, ValueError):
        return np.datetime64("NaT")
    return np.datetime64(moment, "s")


REUTERS_PARTS = PartedLoader(reuters_parts, read_reuters_part, check=check_reuters_parts)
