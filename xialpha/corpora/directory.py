"""Directory-per-category corpora such as 20 Newsgroups "bydate": `<split>/<category>/<file>` or
`<category>/<file>`, as a directory or a tar archive (one extra top-level folder is looked through).

Bytes are decoded as UTF-8, falling back to latin-1 per file. A split folder name ending in
"-train", "_test" etc. gives the split "train"/"test" ("20news-bydate-train" -> "train").
The same file name with the same text under several categories of one split is one document
with all of those categories (multi-label trees); otherwise every file is its own document,
id = its path inside the tree.
"""

from __future__ import annotations

import os
import re
from pathlib import PurePosixPath

import numpy as np

from xialpha.corpora.corpus import Corpus
from xialpha.corpora.sources import decode_text, existing_path, iter_tree_files
from xialpha.errors import UserError

LAYOUTS = ("auto", "split/category", "category")
_SPLIT_SUFFIX = re.compile(r"(?:^|[-_.])(train|test|validation|dev)$", re.I)


def load_directory(path: str | os.PathLike, layout: str = "auto", skip_empty: bool = False,
                   follow_symlinks: bool = False) -> Corpus:
    """A corpus from a directory-per-category tree at `path` (directory or tar archive).

    layout: "split/category" (`<split>/<category>/<file>`), "category" (`<category>/<file>`), or
    "auto" (split/category when files lie two folders deep). skip_empty: drop documents whose text
    is empty or white space instead of refusing them. follow_symlinks: read symbolic links that
    lead outside `path` (refused otherwise; FIFOs, sockets and devices are always refused).
    """
    if layout not in LAYOUTS:
        raise UserError(f"layout: must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    root = existing_path(path)
    files = list(iter_tree_files(root, follow_symlinks=follow_symlinks))
    if not files:
        raise UserError(f"path: no files in {root}")
    files, layout = _resolve_layout(files, layout, root)
    documents: dict[tuple[str, str, str], int] = {}
    ids, texts, labels, splits = [], [], [], []
    for relative, data in files:
        split = _split_name(relative.parts[0]) if layout == "split/category" else ""
        category, file_name = relative.parts[-2], relative.parts[-1]
        text = decode_text(data)
        if not text.strip():
            if skip_empty:
                continue
            raise UserError(f"{root}: document {relative} has no text (set skip_empty = true in [corpus] to drop such files)")
        key = (split, file_name, text)
        if key in documents:
            labels[documents[key]] |= {category}
            continue
        documents[key] = len(ids)
        ids.append(str(relative))
        texts.append(text)
        labels.append({category})
        splits.append(split)
    if not ids:
        raise UserError(f"path: every document in {root} is empty")
    return Corpus(ids=np.array(ids), texts=texts, labels=[frozenset(s) for s in labels],
                  name=root.name.split(".")[0], splits=np.array(splits) if layout == "split/category" else None)


def _resolve_layout(files: list[tuple[PurePosixPath, bytes]], layout: str, root) -> tuple[list, str]:
    """The files relative to the category (or split) folders, and the layout they follow; one
    top-level folder wrapping the whole tree (usual in archives) is looked through."""
    depths = {len(relative.parts) for relative, _ in files}
    if len(depths) != 1:
        raise UserError(f"path: files in {root} lie at different depths {sorted(d - 1 for d in depths)} "
                        "(expected <split>/<category>/<file> or <category>/<file>)")
    depth = depths.pop()
    tops = {relative.parts[0] for relative, _ in files}
    wrapped = len(tops) == 1 and depth >= 3
    if layout == "auto":
        if depth == 3 and wrapped and _SPLIT_SUFFIX.search(next(iter(tops))):
            wrapped = False
        layout = "split/category" if depth - wrapped == 3 else "category"
    expected = 3 if layout == "split/category" else 2
    wrapped = wrapped and depth == expected + 1
    if depth - wrapped != expected:
        raise UserError(f"path: {root} has files {depth - 1} folder(s) deep; layout {layout!r} needs {expected - 1}")
    if wrapped:
        files = [(PurePosixPath(*relative.parts[1:]), data) for relative, data in files]
    return files, layout


def _split_name(folder: str) -> str:
    match = _SPLIT_SUFFIX.search(folder)
    return match[1].lower() if match else folder
