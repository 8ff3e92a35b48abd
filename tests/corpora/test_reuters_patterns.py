"""A Reuters SGML file is scanned in linear time whatever it holds (issue 48, item 2): patterns of
".*?" and "[^>]*" rescanned the rest of a file from every tag never closed ("<TOPICS>" 160,000
bytes over: 31 s), and "(\\w+)=" every word of a tag's attributes from each of its letters."""

from __future__ import annotations

import pytest

from xialpha.corpora import load_reuters
from xialpha.errors import UserError

STORY = (
    '<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" NEWID="1" {attrs}>\n<DATE>26-FEB-1987 15:01:01.79</DATE>\n'
    "<TOPICS><D>cocoa</D>{topics}</TOPICS>\n<TEXT>{text}</TEXT>\n</REUTERS>\n"
)


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    ("attrs", "topics", "text"),
    [
        ("a" * 200_000, "", "<TITLE>T</TITLE><BODY>Body.</BODY>"),  # a word of attributes without "="
        ("", "<TOPICS><D>" * 40_000, "<TITLE>T</TITLE><BODY>Body.</BODY>"),  # openings never closed
        ("", "", "<TITLE><DATELINE><" * 40_000),  # a text without a body: openings, and tags without ">"
    ],
    ids=["attributes", "topics", "tags"],
)
def test_a_hostile_story_is_read_in_linear_time(tmp_path, attrs, topics, text):
    folder = tmp_path / "reuters"
    folder.mkdir()
    (folder / "reut2-000.sgm").write_text(STORY.format(attrs=attrs, topics=topics, text=text), encoding="latin-1")
    try:
        corpus = load_reuters(folder, split="all")
    except UserError as exc:  # refusing it is fine too, at once and in one line
        assert "\n" not in str(exc)
        return
    assert len(corpus.texts) == 1
