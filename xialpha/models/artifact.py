"""Deployable artefacts: a directory with `manifest.json`, `model.json` and `arrays.npz`, all data.

No pickle: model.json (plain JSON) holds each preprocessing's parameters and vocabulary (terms in
column order) and each category's kernel, bias b and config; arrays.npz (NumPy arrays, read with
allow_pickle=False) holds the idf vectors and, per category, the weight vector (linear kernel) or
the support vectors (CSR parts), their squared norms and coefficients (other kernels). Loading an
artefact runs no code from it, so a tampered file can give wrong predictions but not take over
the machine. The manifest records the format, library versions, the sweep and selection, per
category the config and selection metric, and the SHA-256 of the two model files, checked before
they are read (against corruption and mix-ups). The directory is written under a temporary name
and renamed into place.

Artefacts of format version 1 (`models.joblib`, a pickle, written by earlier versions) load only
with `allow_pickle=True`: unpickling runs code from the file.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import os
import platform
import shlex
import shutil
import sys
import uuid
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from xialpha.errors import UserError
from xialpha.estimators import LINEAR
from xialpha.features.kernels import Kernel
from xialpha.features.preprocessing import FittedPreprocessing, Preprocessing
from xialpha.models.trained import CategoryModel, KernelModel, TrainedSelection
from xialpha.outputs import check_output
from xialpha.version import __version__

FORMAT = "xialpha-artifact"
FORMAT_VERSION = 2
PICKLE_FORMAT_VERSION = 1
MANIFEST = "manifest.json"
MODEL = "model.json"
ARRAYS = "arrays.npz"
PICKLED_MODELS = "models.joblib"
PICKLE_WARNING = (
    "{path}: models.joblib is a pickle (an artefact of format version 1); loading it runs code from the "
    "file. Only load artefacts you trust; `xialpha select --refit` now writes artefacts without pickle."
)


def save_artifact(directory: str | Path, trained: TrainedSelection, provenance: dict, protected: Sequence = ()) -> Path:
    """Write `trained` to a new `directory` (it must not exist or be empty, nor lie in a store or
    in `protected`: see `check_target`); return its path.

    provenance: JSON-able facts for the manifest (sweep_id, selection_id, ...). The files are
    written into a hidden staging directory renamed to `directory` once complete: a failure (a
    full disk: UserError naming refit= and the directory) leaves nothing behind.
    """
    target = check_target(directory, protected)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}")
        staging.mkdir()  # with the umask's permissions (tempfile.mkdtemp's are 0700: no one else could load it)
    except OSError as exc:
        raise UserError(f"cannot write {target}: {exc.strerror or exc}", parameter="refit") from None
    try:
        model, arrays = _encode(trained)
        (staging / MODEL).write_text(json.dumps(model, ensure_ascii=False) + "\n", encoding="utf-8")
        np.savez_compressed(staging / ARRAYS, **arrays)
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "serialization": "data: JSON and NumPy arrays, no pickle",
            "sha256": {MODEL: _sha256(staging / MODEL), ARRAYS: _sha256(staging / ARRAYS)},
            "created_at": datetime.datetime.now(datetime.UTC).isoformat(),
            "versions": current_versions(),
            **provenance,
            "categories": [m.config for m in trained.models],
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, default=str) + "\n", encoding="utf-8")
        if target.exists():
            target.rmdir()
        os.replace(staging, target)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, OSError):
            raise UserError(f"cannot write {target}: {exc.strerror or exc}", parameter="refit") from None
        raise
    return target


def check_target(directory: str | Path, protected: Sequence = ()) -> Path:
    """`directory` as a Path if an artefact can be saved there: absent or an empty directory,
    below a writable directory, outside every store and `protected` ((name, path) of what the
    command reads: its store), as `xialpha.outputs.check_output` says. UserError (naming refit=)
    otherwise; nothing is created."""
    target = check_output(directory, "refit", protected)
    if target.is_symlink():  # replacing it would drop the link, following it would write elsewhere
        raise UserError(
            f"{target} is a symbolic link (to {os.readlink(target)}); give the directory itself", parameter="refit"
        )
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UserError(f"{target} already exists and is not an empty directory", parameter="refit")
    ancestor = target.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir() or not os.access(ancestor, os.W_OK | os.X_OK):
        raise UserError(f"cannot create {target}: {ancestor} is not a writable directory", parameter="refit")
    return target


def read_manifest(directory: str | Path) -> dict:
    """The manifest of the artefact at `directory` (UserError if it is not one)."""
    path = Path(directory) / MANIFEST
    if not Path(directory).exists():
        raise UserError(
            f"ARTIFACT: {directory} is not a xialpha artefact: no such directory; `xialpha select "
            f"--refit {shlex.quote(str(directory))}` saves the selected models there"
        )
    if not path.is_file():
        raise UserError(
            f"ARTIFACT: {directory} is not a xialpha artefact (no {MANIFEST}); `xialpha select --refit DIR` saves one"
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise UserError(f"ARTIFACT: {path} is not valid JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise UserError(f"ARTIFACT: {path} is not a xialpha artefact manifest")
    if manifest.get("format_version") not in (FORMAT_VERSION, PICKLE_FORMAT_VERSION):
        raise UserError(
            f"ARTIFACT: {path} has format version {manifest.get('format_version')!r}; this xialpha "
            f"reads versions {PICKLE_FORMAT_VERSION} and {FORMAT_VERSION}"
        )
    return manifest


def is_pickled(manifest: dict) -> bool:
    """True for an artefact of format version 1, whose models are a pickle."""
    return manifest.get("format_version") == PICKLE_FORMAT_VERSION


def load_artifact(directory: str | Path, allow_pickle: bool = False) -> tuple[dict, TrainedSelection]:
    """(manifest, trained models) of the artefact at `directory`, after checking the SHA-256 of its
    files. A pickled artefact (format version 1) is refused unless `allow_pickle`."""
    manifest = read_manifest(directory)
    if is_pickled(manifest):
        if not allow_pickle:
            raise UserError(
                f"ARTIFACT: {directory} holds a pickle (format version 1); loading it runs code from "
                "the file. Pass --allow-pickle if you trust it, or refit it with `xialpha select --refit`"
            )
        return manifest, _load_pickled(Path(directory), manifest)
    digests = manifest.get("sha256")
    for name in (MODEL, ARRAYS):
        _check_digest(Path(directory) / name, digests.get(name) if isinstance(digests, dict) else None)
    path = Path(directory)
    try:
        model = json.loads((path / MODEL).read_text(encoding="utf-8"))
        with np.load(path / ARRAYS, allow_pickle=False) as stored:
            arrays = {name: stored[name] for name in stored.files}
        return manifest, _decode(model, arrays)
    except UserError as exc:
        raise UserError(f"ARTIFACT: {path}: {exc}") from None
    except (
        ValueError,
        KeyError,
        TypeError,
        IndexError,
        AttributeError,
        OverflowError,
        OSError,
        EOFError,
        RecursionError,
        zipfile.BadZipFile,
    ) as exc:  # a file that passed its digest but was not written by save_artifact
        raise UserError(
            f"ARTIFACT: {path}: {MODEL} or {ARRAYS} is malformed ({type(exc).__name__}: "
            f"{' '.join(str(exc).split())[:200]})"
        ) from None


def _encode(trained: TrainedSelection) -> tuple[dict, dict[str, np.ndarray]]:
    """model.json's content and the arrays of arrays.npz for `trained`."""
    arrays: dict[str, np.ndarray] = {}
    preprocessings = {}
    for number, (pp_id, fitted) in enumerate(trained.preprocessings.items()):
        entry = {"number": number, "fitted": fitted is not None}
        if fitted is not None:
            entry.update(params=fitted.spec.params(), terms=fitted.feature_names, n_documents=fitted.n_documents)
            if fitted.idf is not None:
                arrays[f"pp{number}_idf"] = np.asarray(fitted.idf, dtype=np.float64)
        preprocessings[pp_id] = entry
    models = []
    for number, item in enumerate(trained.models):
        model = item.model
        if model.weights is not None:
            arrays[f"m{number}_weights"] = np.asarray(model.weights, dtype=np.float64)
        else:
            vectors = sp.csr_matrix(model.support_vectors, dtype=np.float64)
            arrays.update(
                {
                    f"m{number}_sv_data": vectors.data,
                    f"m{number}_sv_indices": vectors.indices,
                    f"m{number}_sv_indptr": vectors.indptr,
                    f"m{number}_sv_shape": np.array(vectors.shape),
                    f"m{number}_sv_sq_norms": np.asarray(model.sv_sq_norms, dtype=np.float64),
                    f"m{number}_coef": np.asarray(model.coef, dtype=np.float64),
                }
            )
        models.append(
            {
                "category": item.category,
                "preprocessing_id": item.preprocessing_id,
                "kernel": model.kernel.params(),
                "b": float(model.b),
                "config": item.config,
            }
        )
    return {"preprocessings": preprocessings, "models": models}, arrays


def _decode(model: dict, arrays: dict[str, np.ndarray]) -> TrainedSelection:
    """The TrainedSelection of `_encode`'s output; UserError where the parts do not fit together."""
    preprocessings, widths = {}, {}
    for pp_id, entry in model["preprocessings"].items():
        if not entry["fitted"]:
            preprocessings[pp_id] = None
            continue
        terms = entry["terms"]
        if not all(isinstance(term, str) for term in terms) or len(set(terms)) != len(terms):
            raise UserError(f"preprocessing {pp_id}: the terms are not distinct strings")
        spec = Preprocessing(**entry["params"])
        idf = None if spec.idf == "none" else arrays.get(f"pp{entry['number']}_idf")
        if spec.idf != "none":
            _check_shape(f"preprocessing {pp_id} idf", idf, (len(terms),))
        preprocessings[pp_id] = FittedPreprocessing(
            spec=spec,
            vocabulary={term: i for i, term in enumerate(terms)},
            idf=idf,
            n_documents=int(entry["n_documents"]),
        )
        widths[pp_id] = len(terms)
    if not model["models"]:
        raise UserError(f"{MODEL} holds no models (a saved selection has one per category)")
    models = []
    for number, entry in enumerate(model["models"]):
        pp_id = entry["preprocessing_id"]
        if pp_id not in preprocessings:
            raise UserError(f"model {number}: unknown preprocessing {pp_id!r}")
        kernel = Kernel(**entry["kernel"])
        b = float(entry["b"])
        if not math.isfinite(b):
            raise UserError(f"model {number}: its bias b is {b}, expected a finite number")
        models.append(
            CategoryModel(
                str(entry["category"]),
                pp_id,
                _kernel_model(arrays, number, kernel, b, widths.get(pp_id)),
                entry["config"],
            )
        )
    return TrainedSelection(preprocessings, models)


def _kernel_model(arrays: dict, number: int, kernel, b: float, width: int | None) -> KernelModel:
    """Model `number` from its arrays; `width`: the number of features (None: not known here)."""
    if kernel.name == LINEAR:
        weights = arrays[f"m{number}_weights"]
        _check_shape(f"model {number} weights", weights, (width if width is not None else len(weights),))
        return KernelModel(kernel, b, weights=weights)
    shape = tuple(int(n) for n in arrays[f"m{number}_sv_shape"])
    if width is not None and shape[1:] != (width,):
        raise UserError(f"model {number}: support vectors of shape {shape} for {width} features")
    vectors = sp.csr_matrix(
        (arrays[f"m{number}_sv_data"], arrays[f"m{number}_sv_indices"], arrays[f"m{number}_sv_indptr"]), shape=shape
    )
    vectors.check_format(full_check=True)
    sq_norms, coef = arrays[f"m{number}_sv_sq_norms"], arrays[f"m{number}_coef"]
    _check_shape(f"model {number} squared norms", sq_norms, (shape[0],))
    _check_shape(f"model {number} coefficients", coef, (shape[0],))
    return KernelModel(kernel, b, support_vectors=vectors, sv_sq_norms=sq_norms, coef=coef)


def _check_shape(what: str, array, shape: tuple) -> None:
    if array is None or array.shape != shape or array.dtype != np.float64 or not np.isfinite(array).all():
        got = "missing" if array is None else f"{array.dtype} of shape {array.shape}"
        raise UserError(f"{what}: expected finite float64 of shape {shape}, got {got}")


def _check_digest(path: Path, expected) -> None:
    if not path.is_file():
        raise UserError(f"ARTIFACT: {path} is missing")
    if _sha256(path) != expected:
        raise UserError(f"ARTIFACT: {path} does not match the SHA-256 in {MANIFEST} (changed or corrupt)")


def _load_pickled(directory: Path, manifest: dict) -> TrainedSelection:
    """The models of a format version 1 artefact: UNPICKLES models.joblib (runs code from it)."""
    import joblib

    models_path = directory / PICKLED_MODELS
    _check_digest(models_path, manifest.get("models_sha256"))
    try:
        payload = joblib.load(models_path)
        models = [CategoryModel(category, pp_id, model, config) for category, pp_id, model, config in payload["models"]]
        return TrainedSelection(payload["preprocessings"], models)
    except Exception as exc:  # whatever the pickle raises: it is not a readable artefact
        raise UserError(f"ARTIFACT: {models_path} cannot be loaded ({type(exc).__name__}: {exc})") from None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def current_versions() -> dict:
    """Versions of xialpha, Python and the libraries that wrote the artefact."""
    import numpy
    import scipy
    import sklearn

    return {
        "xialpha": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "platform": sys.platform,
    }
