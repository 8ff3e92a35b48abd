"""`xialpha predict ARTIFACT --input FILE`: label new documents with a refitted selection.

Input: a .txt file with one document per line (only "\n" or "\r\n" ends one, whatever else a line
holds; ids are line numbers), or a CSV/TSV/JSON
lines/Parquet table with a text column (and optionally an id column); --input-format names the
format where the file's suffix does not. Output: CSV (id, the predicted categories as a JSON
list, one decision_<category> column each; `xialpha.reports.records`' rule for text cells) or
JSON lines ({"id", "categories", "decision"}). A warning on standard error counts the documents
that share no word with the model's vocabulary (their decision values are the biases alone: often
the wrong model for these documents); they are labelled all the same.

Artefacts are data (JSON and NumPy arrays): loading one runs no code from it. Artefacts of
format version 1 (models.joblib) are pickles and load only with --allow-pickle: loading them
runs code from the file, so only pass it for artefacts you trust.
"""

from __future__ import annotations

import argparse
import sys

from xialpha.models.artifact import PICKLE_WARNING, current_versions, is_pickled, load_artifact, read_manifest
from xialpha.models.prediction import INPUT_FORMATS, INPUT_SUFFIXES, read_documents, wordless, write_predictions
from xialpha.outputs import write_file
from xialpha.reports.formatting import plural

FORMATS = ("csv", "jsonl")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("artifact", metavar="ARTIFACT", help="directory written by `xialpha select --refit`")
    parser.add_argument(
        "--input",
        required=True,
        metavar="FILE",
        help=".txt (one document per line) or a table with a text column: "
        + "/".join(suffix for suffix in INPUT_SUFFIXES if suffix != ".txt"),
    )
    parser.add_argument(
        "--input-format",
        choices=INPUT_FORMATS,
        help="how to read --input: txt (one document per line) or a table format (default: from its suffix)",
    )
    parser.add_argument("--text-column", default="text", help="text column of a table input (default text)")
    parser.add_argument("--id-column", help="id column of a table input (default: row numbers)")
    parser.add_argument("--output", metavar="FILE", help="output file, or - for standard output (the default)")
    parser.add_argument("--format", choices=FORMATS, help="output format (default: from --output's suffix, else csv)")
    parser.add_argument(
        "--allow-pickle",
        action="store_true",
        help="load an old artefact (format version 1) whose models are a pickle: this runs code "
        "from the file, so only for artefacts you trust",
    )


def run(args: argparse.Namespace) -> int:
    if is_pickled(read_manifest(args.artifact)) and args.allow_pickle:  # a wrong directory fails first
        print(f"warning: {PICKLE_WARNING.format(path=args.artifact)}", file=sys.stderr)
    ids, texts, blank_lines = read_documents(args.input, args.text_column, args.id_column, args.input_format)
    manifest, trained = load_artifact(args.artifact, allow_pickle=args.allow_pickle)
    _warn_versions(manifest)
    features = trained.features_by_preprocessing(texts=texts)
    decision = trained.decisions(features)
    unknown = wordless(features)
    out_format = args.format or ("jsonl" if (args.output or "").lower().endswith((".jsonl", ".ndjson")) else "csv")
    if args.output:
        write_file(
            args.output,
            lambda stream: write_predictions(stream, ids, trained.categories, decision, out_format),
            "output",
            protected=[("ARTIFACT", args.artifact), ("--input", args.input)],
        )
        print(f"labelled {plural(len(ids), 'document')} into {args.output}", file=sys.stderr)
    else:
        write_predictions(sys.stdout, ids, trained.categories, decision, out_format)
    if unknown:
        print(
            f"warning: {unknown} of {plural(len(ids), 'document')} {'shares' if unknown == 1 else 'share'} no word "
            "with the model's vocabulary "
            "(their decision values are the biases alone): is this the model for these documents?",
            file=sys.stderr,
        )
    if blank_lines:
        print(f"{plural(blank_lines, 'blank line')} left out (each id is its document's line number)", file=sys.stderr)
    return 0


def _warn_versions(manifest: dict) -> None:
    saved = manifest.get("versions", {})
    now = current_versions()
    differ = [
        f"{name} {saved[name]} (now {now[name]})"
        for name in ("xialpha", "numpy", "scipy")
        if saved.get(name) and saved[name] != now[name]
    ]
    if differ:
        print(
            f"warning: the artefact was saved with {', '.join(differ)}; it may not load or predict the same",
            file=sys.stderr,
        )
