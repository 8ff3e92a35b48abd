"""Reuters-21578 SGML loader: the real corpus counts, and parsing details on small files."""

from __future__ import annotations

import tarfile

import numpy as np
import pytest

from xialpha.corpora import load_corpus, load_reuters
from xialpha.errors import UserError

SGML = b"""<!DOCTYPE lewis SYSTEM "lewis.dtd">
<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" CGISPLIT="TRAINING-SET" OLDID="1" NEWID="1">
<DATE>26-FEB-1987 15:01:01.79</DATE>
<TOPICS><D>cocoa</D><D>grain</D></TOPICS>
<PLACES><D>usa</D></PLACES>
<TEXT>&#2;
<TITLE>COCOA &amp; GRAIN &lt;XYZ&gt; REVIEW</TITLE>
<DATELINE>    SALVADOR, Feb 26 - </DATELINE><BODY>Showers continued in the Bahia caf\xe9 zone.
 Reuter
&#3;</BODY></TEXT>
</REUTERS>
<REUTERS TOPICS="YES" LEWISSPLIT="TEST" CGISPLIT="TRAINING-SET" OLDID="2" NEWID="2">
<DATE>  3-MAR-1987 00:43:42.82</DATE>
<TOPICS><D>money-fx</D></TOPICS>
<TEXT TYPE="BRIEF">&#2;
******<TITLE>FED SETS REPURCHASE AGREEMENTS
</TITLE>Blah blah blah.
&#3;
</TEXT>
</REUTERS>
<REUTERS TOPICS="YES" LEWISSPLIT="TEST" CGISPLIT="TRAINING-SET" OLDID="3" NEWID="3">
<DATE>31-FEB-1987 99:99:99.00</DATE>
<TOPICS></TOPICS>
<TEXT TYPE="UNPROC">&#2;
FEDERAL RESERVE WEEKLY REPORT
 Net free reserves.............644 vs.....1,337
&#3;</TEXT>
</REUTERS>
<REUTERS TOPICS="NO" LEWISSPLIT="TRAIN" CGISPLIT="TRAINING-SET" OLDID="4" NEWID="4">
<DATE>26-FEB-1987 15:01:01.79</DATE>
<TOPICS><D>earn</D></TOPICS>
<TEXT><TITLE>NOT MODAPTE</TITLE><BODY>Topics no.</BODY></TEXT>
</REUTERS>
<REUTERS TOPICS="YES" LEWISSPLIT="NOT-USED" CGISPLIT="TRAINING-SET" OLDID="5" NEWID="5">
<DATE>26-FEB-1987 15:01:01.79</DATE>
<TOPICS><D>earn</D></TOPICS>
<TEXT><TITLE>UNUSED</TITLE><BODY>Not used.</BODY></TEXT>
</REUTERS>
"""


@pytest.fixture
def sgml_dir(tmp_path):
    folder = tmp_path / "reuters"
    folder.mkdir()
    (folder / "reut2-000.sgm").write_bytes(SGML)
    (folder / "README.txt").write_text("not a story")
    return folder


def test_modapte_stories_text_labels_times_splits(sgml_dir):
    corpus = load_reuters(sgml_dir)
    assert corpus.ids.tolist() == ["1", "2", "3"]
    assert corpus.splits.tolist() == ["train", "test", "test"]
    assert corpus.labels == [frozenset({"cocoa", "grain"}), frozenset({"money-fx"}), frozenset()]
    first = corpus.texts[0]
    assert first.startswith("COCOA & GRAIN <XYZ> REVIEW\n")
    assert "Bahia caf\u00e9 zone" in first  # latin-1 byte 0xE9
    assert "SALVADOR" not in first  # the dateline is not part of TITLE + BODY
    assert "\x03" not in first and "&#" not in first
    assert corpus.texts[1].startswith("FED SETS REPURCHASE AGREEMENTS")  # brief: title kept
    assert "Blah" not in corpus.texts[1]  # ... and its placeholder body dropped
    assert "Net free reserves" in corpus.texts[2]  # unprocessed text kept
    assert corpus.timestamps[0] == np.datetime64("1987-02-26T15:01:01")
    assert corpus.timestamps[1] == np.datetime64("1987-03-03T00:43:42")
    assert np.isnat(corpus.timestamps[2])


def test_all_split_keeps_every_story(sgml_dir):
    corpus = load_reuters(sgml_dir, split="all")
    assert corpus.ids.tolist() == ["1", "2", "3", "4", "5"]
    assert corpus.splits.tolist() == ["train", "test", "test", "train", "not-used"]


def test_archive_gives_the_same_corpus(sgml_dir, tmp_path):
    archive = tmp_path / "reuters21578.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(sgml_dir / "reut2-000.sgm", arcname="reut2-000.sgm")
    assert load_corpus("reuters21578", path=archive).fingerprint() == load_reuters(sgml_dir).fingerprint()


def test_bad_inputs(tmp_path, sgml_dir):
    with pytest.raises(UserError, match="does not exist"):
        load_reuters(tmp_path / "missing")
    with pytest.raises(UserError, match="expected a directory or a tar archive"):
        load_reuters(sgml_dir / "README.txt")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError, match="no reut2-NNN.sgm files"):
        load_reuters(empty)
    with pytest.raises(UserError, match="split: must be one of modapte, all"):
        load_reuters(sgml_dir, split="lewis")


@pytest.mark.reuters
def test_modapte_counts_on_the_real_corpus(reuters_dir):
    corpus = load_reuters(reuters_dir)
    assert len(corpus) == 12_902
    assert len(corpus.split("train")) == 9_603
    assert len(corpus.split("test")) == 3_299
    top = dict(list(corpus.category_counts().items())[:10])
    # Documents per category. The figures 487 (trade) and 238 (corn) count <D> entries, not
    # documents: story 19918 lists "trade" twice and story 5467 lists "corn" twice in TOPICS.
    assert top == {
        "earn": 3964,
        "acq": 2369,
        "money-fx": 717,
        "grain": 582,
        "crude": 578,
        "trade": 486,
        "interest": 478,
        "ship": 286,
        "wheat": 283,
        "corn": 237,
    }
    labels = dict(zip(corpus.ids, corpus.labels))
    assert "trade" in labels["19918"] and "corn" in labels["5467"]
    assert not np.isnat(corpus.timestamps).any()
    assert all(text.strip() for text in corpus.texts)


@pytest.mark.parametrize(
    "cut, message",
    [
        (
            SGML.index(b"Net free reserves"),
            r"story 3 \(NEWID=3, line 21\) has no </REUTERS>: the file is truncated or corrupt",
        ),
        (SGML.index(b'<REUTERS TOPICS="NO"') + 12, r"story 4 \(NEWID=\?, line 29\) has no </REUTERS>"),
        (SGML.index(b"</REUTERS>", SGML.index(b'NEWID="5"')) + 5, r"story 5 \(NEWID=5, line 34\) has no </REUTERS>"),
    ],
)
def test_a_truncated_file_is_refused_naming_file_and_story(sgml_dir, cut, message):
    # before: the stories before the cut were loaded and the cut one (and the rest) silently dropped
    (sgml_dir / "reut2-001.sgm").write_bytes(SGML.replace(b'NEWID="', b'NEWID="1'))
    (sgml_dir / "reut2-000.sgm").write_bytes(SGML[:cut])
    with pytest.raises(UserError, match=r"reut2-000.sgm: " + message):
        load_reuters(sgml_dir, split="all")


def test_a_story_cut_out_of_the_middle_is_refused(sgml_dir):
    # the cut story's <REUTERS> is followed by the next story: the pattern would swallow both as one
    start, end = SGML.index(b"FEDERAL RESERVE"), SGML.index(b'<REUTERS TOPICS="NO"')
    (sgml_dir / "reut2-000.sgm").write_bytes(SGML[:start] + SGML[end:])
    with pytest.raises(UserError, match=r"story 3 \(NEWID=3, line 21\) has no </REUTERS>"):
        load_reuters(sgml_dir, split="all")


def test_text_after_the_last_story_is_refused(sgml_dir):
    (sgml_dir / "reut2-000.sgm").write_bytes(SGML + b"<REUT")
    with pytest.raises(UserError, match=r"text after the last complete story \(NEWID=5\) is not a story: '<REUT'"):
        load_reuters(sgml_dir)
    (sgml_dir / "reut2-000.sgm").write_bytes(b"garbage without stories")
    with pytest.raises(UserError, match="reut2-000.sgm holds no <REUTERS> story"):
        load_reuters(sgml_dir)


@pytest.mark.reuters
def test_a_truncated_copy_of_the_real_corpus_is_refused(reuters_dir, tmp_path):
    # the reproduction: two files, the second cut at 700,000 bytes, loaded 1,587 of 2,000 stories
    for name in ("reut2-000.sgm", "reut2-001.sgm"):
        (tmp_path / name).write_bytes((reuters_dir / name).read_bytes())
    assert len(load_reuters(tmp_path, split="all")) == 2000
    (tmp_path / "reut2-001.sgm").write_bytes((reuters_dir / "reut2-001.sgm").read_bytes()[:700_000])
    with pytest.raises(UserError, match=r"reut2-001.sgm: story 588 \(NEWID=1588, line \d+\) has no </REUTERS>"):
        load_reuters(tmp_path, split="all")
