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
from pathlib import Path, PurePosixPath

import numpy as np

from xialpha.corpora.corpus import Corpus
from xialpha.corpora.parts import Census, Listing, Part, PartedLoader, RawPart
from xialpha.corpora.sources import decode_text, existing_path, iter_tree_files, read_regular_file, tree_files
from xialpha.errors import UserError, one_of

LAYOUTS = ("auto", "split/category", "category")
_SPLIT_SUFFIX = re.compile(r"(?:^|[-_.])(train|test|validation|dev)$", re.I)


def directory_parts(*, path, layout: str, skip_empty: bool, follow_symlinks: bool) -> list[Part]:
    """One part per split folder (layout split/category), else one for the whole tree: a document
    filed under several categories of a split is merged within its split's part. An archive is
    one part (a compressed stream is read in one pass). The tree is listed, not read, here."""
    if layout not in LAYOUTS:
        raise UserError(one_of(layout, LAYOUTS), key="layout")
    root = existing_path(path)
    settings = {"path": str(root), "layout": layout, "skip_empty": skip_empty, "follow_symlinks": follow_symlinks}
    if not root.is_dir():
        return [Part("directory", str(root), settings, where=())]
    files = tree_files(root, follow_symlinks)
    if not files:
        raise UserError(f"no files in {root}", key="path")
    relatives, layout, wrapper = _resolve_layout([relative for relative, _ in files], layout, root)
    settings["layout"] = layout
    if layout == "category":
        return [Part("directory", str(root), settings, where=(wrapper, ""))]
    folders = dict.fromkeys(relative.parts[0] for relative in relatives)
    return [Part("directory", str(root / wrapper / folder), settings, where=(wrapper, folder)) for folder in folders]


def read_directory_part(part: Part) -> RawPart:
    """The documents of one split folder (or of the whole tree, or archive)."""
    root = Path(part.args["path"])
    follow, layout = part.args["follow_symlinks"], part.args["layout"]
    if part.where:
        wrapper, folder = part.where
        base = root / wrapper
        files = [
            (PurePosixPath(folder) / relative if folder else relative, data)
            for relative, data in iter_tree_files(base / folder, follow_symlinks=follow, root=root)
        ]
    else:
        files = list(iter_tree_files(root, follow_symlinks=follow))
        if not files:
            raise UserError(f"no files in {root}", key="path")
        relatives, layout, wrapper = _resolve_layout([relative for relative, _ in files], layout, root)
        files = [(relative, data) for relative, (_, data) in zip(relatives, files)]
    corpus = _documents(files, layout, root, part.args["skip_empty"])
    return RawPart(corpus, len(corpus))


def list_directory_part(part: Part) -> Listing | None:
    """The documents of one split folder (or of the whole tree) as its listing shows them: split
    and category from the folder names, sizes from the files' status, no file read. None for an
    archive (its members are listed only by reading through its stream)."""
    if not part.where:
        return None
    root = Path(part.args["path"])
    wrapper, folder = part.where
    files = [
        (PurePosixPath(folder) / relative if folder else relative, target)
        for relative, target in tree_files(root / wrapper / folder, part.args["follow_symlinks"], root)
    ]
    return Listing(
        name=root.name.split(".")[0],
        splits=[_split_name(relative.parts[0]) for relative, _ in files]
        if part.args["layout"] == "split/category"
        else None,
        categories=[relative.parts[-2] for relative, _ in files],
        sizes=[os.stat(target).st_size for _, target in files],
        files=[(str(relative), str(target)) for relative, target in files],
    )


def read_directory_sample(part: Part, listing: Listing, positions: list[int]) -> Corpus:
    """The documents of the files at `positions` of one split folder's `listing`
    (`list_directory_part`), empty ones dropped: a sample read for estimates."""
    chosen = [listing.files[i] for i in positions]
    read = [(PurePosixPath(relative), read_regular_file(target, f"path: {target}")) for relative, target in chosen]
    return _documents(read, part.args["layout"], Path(part.args["path"]), skip_empty=True)


def check_directory_parts(parts: list[Part], censuses: list[Census]) -> None:
    """UserError when every document of the tree was empty and skipped."""
    if not sum(sum(c.split_sizes.values()) for c in censuses):
        raise UserError(f"every document in {parts[0].args['path']} is empty", key="path")


def _documents(files: list[tuple[PurePosixPath, bytes]], layout: str, root: Path, skip_empty: bool) -> Corpus:
    """The documents of `files` (paths relative to the split or category folders' parent), one per
    file, merging a file name with the same text under several categories of one split."""
    documents: dict[tuple[str, str, str], int] = {}
    ids, texts, labels, splits = [], [], [], []
    for relative, data in files:
        split = _split_name(relative.parts[0]) if layout == "split/category" else ""
        category, file_name = relative.parts[-2], relative.parts[-1]
        text = decode_text(data)
        if not text.strip():
            if skip_empty:
                continue
            raise UserError(
                f"{root}: document {relative} has no text (set skip_empty = true in [corpus] to drop such files)"
            )
        key = (split, file_name, text)
        if key in documents:
            labels[documents[key]] |= {category}
            continue
        documents[key] = len(ids)
        ids.append(str(relative))
        texts.append(text)
        labels.append({category})
        splits.append(split)
    return Corpus(
        ids=np.array(ids, dtype=str),
        texts=texts,
        labels=[frozenset(s) for s in labels],
        name=root.name.split(".")[0],
        splits=np.array(splits, dtype=str) if layout == "split/category" else None,
    )


def _resolve_layout(relatives: list[PurePosixPath], layout: str, root) -> tuple[list[PurePosixPath], str, str]:
    """The paths relative to the category (or split) folders, the layout they follow, and the one
    top-level folder wrapping the whole tree (usual in archives) that was looked through ("" if none)."""
    depths = {len(relative.parts) for relative in relatives}
    if len(depths) != 1:
        raise UserError(
            f"files in {root} lie at different depths {sorted(d - 1 for d in depths)} "
            "(expected <split>/<category>/<file> or <category>/<file>)",
            key="path",
        )
    depth = depths.pop()
    tops = {relative.parts[0] for relative in relatives}
    wrapped = len(tops) == 1 and depth >= 3
    if layout == "auto":
        if depth == 3 and wrapped and _SPLIT_SUFFIX.search(next(iter(tops))):
            wrapped = False
        layout = "split/category" if depth - wrapped == 3 else "category"
    expected = 3 if layout == "split/category" else 2
    wrapped = wrapped and depth == expected + 1
    if depth - wrapped != expected:
        raise UserError(
            f"{root} has files {depth - 1} folder(s) deep; layout {layout!r} needs {expected - 1}", key="path"
        )
    if not wrapped:
        return relatives, layout, ""
    return [PurePosixPath(*relative.parts[1:]) for relative in relatives], layout, relatives[0].parts[0]


def _split_name(folder: str) -> str:
    match = _SPLIT_SUFFIX.search(folder)
    return match[1].lower() if match else folder


DIRECTORY_PARTS = PartedLoader(
    directory_parts,
    read_directory_part,
    check=check_directory_parts,
    listed=list_directory_part,
    sample=read_directory_sample,
)
