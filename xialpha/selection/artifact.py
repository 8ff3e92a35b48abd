"""Deployable artefacts: a directory with `manifest.json` and `models.joblib`.

models.joblib is a PICKLE (joblib) of the fitted preprocessings and the SVM models: loading
it runs code from the file, so load only artefacts you made or trust. The manifest (plain JSON)
records the format, the library versions, the sweep and selection, and per category the
config key, parameters and selection metric; it also holds the SHA-256 of models.joblib, which
is checked before unpickling (against corruption and mix-ups, not against an attacker who can
rewrite both files). The directory is written under a temporary name and renamed into place.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

from xialpha import __version__
from xialpha.errors import UserError
from xialpha.selection.refit import CategoryModel, TrainedSelection

FORMAT = "xialpha-artifact"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
MODELS = "models.joblib"
PICKLE_WARNING = (
    "{path}: models.joblib is a pickle; loading it runs code from the file. Only load artefacts you trust."
)


def save_artifact(directory: str | Path, trained: TrainedSelection, provenance: dict) -> Path:
    """Write `trained` to a new `directory` (it must not exist or be empty); return its path.

    provenance: JSON-able facts for the manifest (sweep_id, selection_id, ...).
    """
    import joblib

    target = check_target(directory)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        payload = {"preprocessings": trained.preprocessings,
                   "models": [(m.category, m.preprocessing_id, m.model, m.config) for m in trained.models]}
        joblib.dump(payload, staging / MODELS)
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "serialization": "joblib pickle: load only if you trust this file",
            "models_sha256": _sha256(staging / MODELS),
            "created_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "versions": current_versions(),
            **provenance,
            "categories": [m.config for m in trained.models],
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, default=str) + "\n", encoding="utf-8")
        if target.exists():
            target.rmdir()
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def check_target(directory: str | Path) -> Path:
    """`directory` as a Path if an artefact can be saved there: absent or an empty directory,
    below a writable directory. UserError (naming --refit) otherwise; nothing is created."""
    target = Path(directory)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UserError(f"--refit: {target} already exists and is not an empty directory")
    ancestor = target.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir() or not os.access(ancestor, os.W_OK | os.X_OK):
        raise UserError(f"--refit: cannot create {target}: {ancestor} is not a writable directory")
    return target


def read_manifest(directory: str | Path) -> dict:
    """The manifest of the artefact at `directory` (UserError if it is not one)."""
    path = Path(directory) / MANIFEST
    if not path.is_file():
        raise UserError(f"ARTIFACT: {directory} is not a xialpha artefact (no {MANIFEST})")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise UserError(f"ARTIFACT: {path} is not valid JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise UserError(f"ARTIFACT: {path} is not a xialpha artefact manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise UserError(f"ARTIFACT: {path} has format version {manifest.get('format_version')!r}; this xialpha "
                        f"reads version {FORMAT_VERSION}")
    return manifest


def load_artifact(directory: str | Path) -> tuple[dict, TrainedSelection]:
    """(manifest, trained models) of the artefact at `directory`; checks the models' SHA-256."""
    import joblib

    manifest = read_manifest(directory)
    models_path = Path(directory) / MODELS
    if not models_path.is_file():
        raise UserError(f"ARTIFACT: {models_path} is missing")
    if _sha256(models_path) != manifest.get("models_sha256"):
        raise UserError(f"ARTIFACT: {models_path} does not match the SHA-256 in {MANIFEST} (changed or corrupt)")
    payload = joblib.load(models_path)
    models = [CategoryModel(category, pp_id, model, config) for category, pp_id, model, config in payload["models"]]
    return manifest, TrainedSelection(payload["preprocessings"], models)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def current_versions() -> dict:
    """Versions of xialpha, Python and the libraries whose objects the pickle holds."""
    import joblib
    import numpy
    import scipy
    import sklearn

    return {"xialpha": __version__, "python": platform.python_version(), "numpy": numpy.__version__,
            "scipy": scipy.__version__, "scikit-learn": sklearn.__version__, "joblib": joblib.__version__,
            "platform": sys.platform}
