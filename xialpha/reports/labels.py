"""Readable names for a sweep's configurations, made of the parameters that differ within it.

A configuration is (preprocessing, kernel, C, j). Its label names only what varies in the sweep,
spelled as in the spec: `idf=none rbf gamma=0.5 C=0.3`, or just `C=0.3` when only C varies.
Numbers get the fewest significant digits (at least 4) that keep a parameter's values apart,
and two preprocessings (or kernels) whose stored parameters agree are told apart by `#1`, `#2`.
So labels are unique within the sweep; the ids (hashes) stay in the store. `key` explains the
preprocessing and kernel parts once each, with every parameter.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import SupportsFloat

import pandas as pd

from xialpha.estimators import PARAMETER_NAMES
from xialpha.features.preprocessing import Preprocessing
from xialpha.reports.columns import ReportColumn
from xialpha.reports.formatting import missing
from xialpha.storage.schema import PP_PREFIX, ResultColumn

# The columns a configuration's label is made of, in its order.
CONFIG_PARTS = (ResultColumn.PREPROCESSING_ID, ResultColumn.KERNEL_ID, ResultColumn.C, ResultColumn.J)
# The preprocessing parameters that are fractions (max_df), shown with a point.
REAL_PARAMETERS = {field.name for field in fields(Preprocessing) if field.type == "float"}


@dataclass(frozen=True)
class ConfigLabels:
    """Labels of one sweep's configuration parts; "" for a part the whole sweep shares.

    preprocessings / kernels: id -> label; C / j: value -> text; kernel_names: kernel_id ->
    kernel name; parameters: (part, id) -> every parameter as text, part "preprocessing" or
    "kernel".
    """

    preprocessings: dict
    kernels: dict
    C: dict
    j: dict
    kernel_names: dict
    parameters: dict

    def config(self, preprocessing_id: str, kernel_id: str, C: float, j: float) -> str:
        """The configuration's label (C when nothing differs)."""
        parts = [
            self.preprocessings.get(preprocessing_id, str(preprocessing_id)),
            self.kernels.get(kernel_id, str(kernel_id)),
            _part("C", self.C, C),
            _part("j", self.j, j),
        ]
        return " ".join(p for p in parts if p) or f"C={_number(C)}"

    def group(self, preprocessing_id: str, kernel_id: str, j: float) -> str:
        """The label of a configuration without its C (the kernel name when nothing else differs)."""
        parts = [
            self.preprocessings.get(preprocessing_id, str(preprocessing_id)),
            self.kernels.get(kernel_id, str(kernel_id)),
            _part("j", self.j, j),
        ]
        return " ".join(p for p in parts if p) or str(self.kernel_names.get(kernel_id, kernel_id))

    def of_row(self, row: pd.Series, prefix: str = "") -> str:
        """The label of a results or selection row; prefix "runner_up_" labels a selection's runner-up."""
        if missing(row.get(f"{prefix}preprocessing_id")):
            return "-"
        return self.config(*(row[f"{prefix}{name}"] for name in CONFIG_PARTS))

    def column(self, frame: pd.DataFrame, prefix: str = "") -> list[str]:
        """The labels of the rows of `frame` (see of_row), each distinct configuration labelled once."""
        if f"{prefix}preprocessing_id" not in frame:
            return ["-"] * len(frame)
        parts = [frame[f"{prefix}{name}"].tolist() for name in CONFIG_PARTS]
        labels: dict[tuple, str] = {}
        out = []
        for config in zip(*parts):
            label = labels.get(config)
            if label is None:
                label = labels[config] = "-" if missing(config[0]) else self.config(*config)
            out.append(label)
        return out

    def key(self, frame: pd.DataFrame, prefixes: tuple[str, ...] = ("",)) -> pd.DataFrame:
        """Columns part, label, parameters: each preprocessing and kernel the rows of `frame` name
        (in columns <prefix>preprocessing_id and <prefix>kernel_id) once, in order of first use;
        a part the whole sweep shares is labelled "(all)"; a label that says it all (a kernel
        without parameters) is left out."""
        rows = []
        for part, labels in (("preprocessing", self.preprocessings), ("kernel", self.kernels)):
            ids = [i for p in prefixes for i in frame[f"{p}{part}_id"] if not missing(i)]
            for item in dict.fromkeys(ids):
                label, parameters = labels.get(item) or "(all)", self.parameters.get((part, item))
                if parameters is not None and parameters != label:
                    rows.append({"part": part, ReportColumn.LABEL: label, "parameters": parameters})
        return pd.DataFrame(rows, columns=["part", ReportColumn.LABEL, "parameters"])


def sweep_labels(results: pd.DataFrame) -> ConfigLabels:
    """The labels of the configurations in `results` (rows of one sweep: results columns)."""
    pp_columns = [c for c in results.columns if c.startswith(PP_PREFIX)]
    pps = results.drop_duplicates(ResultColumn.PREPROCESSING_ID).set_index(ResultColumn.PREPROCESSING_ID)
    kernels = results.drop_duplicates(ResultColumn.KERNEL_ID).set_index(ResultColumn.KERNEL_ID)
    kernel_columns = [c for c in PARAMETER_NAMES if c in results.columns]
    pp_text = _texts(pps, pp_columns)
    kernel_text = _texts(kernels, kernel_columns)
    pp_labels = _labels(pps, pp_columns, pp_text, name=None)
    kernel_labels = _labels(kernels, kernel_columns, kernel_text, name=kernels[ResultColumn.KERNEL].astype(str))
    parameters = {
        **{
            ("preprocessing", i): " ".join(f"{c[len(PP_PREFIX) :]}={pp_text[c][i]}" for c in pp_columns)
            for i in pps.index
        },
        **{
            ("kernel", i): " ".join(
                [str(kernels.at[i, ResultColumn.KERNEL])]
                + [f"{c}={kernel_text[c][i]}" for c in kernel_columns if not missing(kernels.at[i, c])]
            )
            for i in kernels.index
        },
    }
    return ConfigLabels(
        preprocessings=_unique(pp_labels, "pp") if len(pps) > 1 else dict.fromkeys(pps.index, ""),
        kernels=_unique(kernel_labels, "kernel") if len(kernels) > 1 else dict.fromkeys(kernels.index, ""),
        C=_value_texts(results[ResultColumn.C]),
        j=_value_texts(results[ResultColumn.J]),
        kernel_names=kernels[ResultColumn.KERNEL].astype(str).to_dict(),
        parameters=parameters,
    )


def _texts(table: pd.DataFrame, columns: list[str]) -> dict:
    """column -> {id: the value as text ("none" when missing)}; a whole value of a preprocessing
    parameter that is a fraction keeps its point (max_df=1.0, not max_df=1: one document)."""
    out = {}
    for column in columns:
        texts = _value_texts(table[column], keep_point=column.removeprefix(PP_PREFIX) in REAL_PARAMETERS)
        out[column] = {i: "none" if missing(v) else texts[v] for i, v in table[column].items()}
    return out


def _labels(table: pd.DataFrame, columns: list[str], texts: dict, name: pd.Series | None) -> dict:
    """id -> the name=value pairs of the columns whose values differ between the rows of `table`,
    led by `name` (a Series of kernel names) when given."""
    differing = [c for c in columns if len(set(texts[c].values())) > 1]
    labels = {}
    for i in table.index:
        pairs = [
            f"{c[len(PP_PREFIX) :] if c.startswith(PP_PREFIX) else c}={texts[c][i]}"
            for c in differing
            if name is None or not missing(table.at[i, c])
        ]
        labels[i] = " ".join(([str(name[i])] if name is not None else []) + pairs)
    return labels


def _unique(labels: dict, fallback: str) -> dict:
    """The labels with `#1`, `#2`, ... (in id order) appended where several ids share one."""
    shared: dict[str, list] = {}
    for item, label in labels.items():
        shared.setdefault(label, []).append(item)
    out = dict(labels)
    for label, items in shared.items():
        if len(items) > 1:
            for n, item in enumerate(sorted(items, key=str), start=1):
                out[item] = f"{label} #{n}" if label else f"{fallback}#{n}"
    return out


def _value_texts(values: pd.Series, keep_point: bool = False) -> dict:
    """Each distinct value -> its text: booleans true/false, numbers in the fewest significant
    digits (4 to 17) that keep the distinct values apart (a whole one as "1.0" if `keep_point`),
    others as str."""
    distinct = [v for v in dict.fromkeys(values.tolist()) if not missing(v)]
    numbers = [v for v in distinct if isinstance(v, (int, float)) and not isinstance(v, bool)]
    digits = next((d for d in range(4, 18) if len({_number(v, d) for v in numbers}) == len(set(numbers))), 17)
    return {
        v: ("true" if v else "false")
        if isinstance(v, bool)
        else _number(v, digits, keep_point)
        if v in numbers
        else str(v)
        for v in distinct
    }


def _part(name: str, texts: dict, value: float) -> str:
    """name=value when the sweep has several values of this parameter, else ""."""
    return f"{name}={texts.get(value, _number(value))}" if len(texts) > 1 else ""


def _number(value: SupportsFloat, digits: int = 4, keep_point: bool = False) -> str:
    text = f"{float(value):.{digits}g}"
    return f"{text}.0" if keep_point and text.lstrip("-").isdigit() else text
