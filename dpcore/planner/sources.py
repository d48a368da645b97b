"""The planner's data sources (docs/planner.md, "Data"): each family's table of sources
(:attr:`dpcore.family.Family.sources`), the data settings a source fixes, and an uploaded file read once, at
the boundary, through the source's loader, with the :class:`~dpcore.family.DataLoader` that lets an exported script
read it again."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..experiments.families import FAMILIES
from ..family import DataLoader, DataSource
from ..validation import InputError, check_choice

__all__ = ["READS", "SYNTHETIC", "planner_sources", "proxy_data", "read_bundled", "read_upload", "source_settings",
           "upload_shape"]

SYNTHETIC = "synthetic"
"""The source of a family whose table offers none: the settings' synthetic model."""
READS = {"proxy": "a public proxy of the same shape (synthetic; reads only N and D of your file)",
         "mine": "my data (reads its values: their norms and their curve; not private)"}
"""What a plan on a file of the user's reads (the page's choice, the command line's ``--use-my-data``; the answer's
``settings.read``): a public proxy, the default, or the file's values."""


def planner_sources(family: str) -> dict[str, DataSource]:
    """The data sources the planner offers for ``family``, the first the default (a family without a table: its
    synthetic model only)."""
    family = check_choice(family, "algorithm family", tuple(FAMILIES))
    return dict(FAMILIES[family].sources) or {SYNTHETIC: DataSource(label="synthetic model")}


def source_settings(family: str, source: str, **fields: Any) -> Any:
    """The family's data settings for ``source``: the fields the source fixes, then ``fields`` (flags or widgets)."""
    sources = planner_sources(family)
    source = check_choice(source, "data source", tuple(sources))
    return FAMILIES[family].sweep.data(**{**sources[source].fields, **fields})


def read_upload(family: str, source: str, content: bytes | str, name: str, **options: Any) -> tuple[Any, DataLoader]:
    """``content`` (the file named ``name``) read by ``source``'s loader with ``options`` (None values dropped), and
    the :class:`DataLoader` that reads it again (the loader's module and function, the options it normalised, and
    the file's name). Refused with a message naming what is allowed: a source that takes no upload, an option the
    loader does not take."""
    sources = planner_sources(family)
    source = check_choice(source, "data source", tuple(sources))
    src = sources[source]
    if not src.upload:
        uploads = [k for k, s in sources.items() if s.upload]
        raise InputError(f"the data source {source!r} of {family} takes no file"
                         + (f"; the uploads are {', '.join(uploads)}" if uploads else "; it has no upload"), "file")
    given = {k: v for k, v in options.items() if v is not None}
    wrong = sorted(set(given) - set(src.options))
    if wrong:
        raise InputError(f"{', '.join(wrong)} do(es) not apply to {src.label}"
                         + (f"; it takes {', '.join(src.options)}" if src.options else ""), wrong[0])
    dataset = src.load(content, name, **given)
    kept = getattr(dataset, "options", None)
    loader = DataLoader(module=src.load.__module__, function=src.load.__name__,
                        options=dict(kept) if isinstance(kept, dict) else given, file=str(name))
    return dataset, loader


def read_bundled(family: str, source: str) -> tuple[Any, DataLoader | None]:
    """A bundled source's data set and the :class:`DataLoader` that loads it again (``function(**options)``); (None,
    None) for a source whose data the settings make (synthetic, or a bundled set the settings name)."""
    sources = planner_sources(family)
    source = check_choice(source, "data source", tuple(sources))
    src = sources[source]
    if src.bundled is None:
        return None, None
    dataset = src.bundled()
    kept = getattr(dataset, "options", None)
    return dataset, DataLoader(module=src.bundled.__module__, function=src.bundled.__name__,
                               options=dict(kept) if isinstance(kept, dict) else {})


def upload_shape(dataset: Any) -> tuple[int, int]:
    """(N, D) of an uploaded data set: samples (documents) and features (vocabulary words), all a proxy reads."""
    corpus = getattr(dataset, "corpus", None)
    if corpus is not None:
        return int(corpus.n), int(corpus.dim)
    values = getattr(dataset, "values", None)
    if values is not None:
        return int(values.shape[0]), int(values.shape[1])
    return int(dataset.n_samples), int(dataset.dim)


def proxy_data(family: str, source: str, dataset: Any, k: int | None, seed: int) -> Any:
    """The public proxy of an upload (docs/planner.md, "Data"): the family's synthetic source with the upload's
    dimension D (and the source's fixed fields, e.g. capeAGN's model), K as asked; nothing of the file is read but
    its N and D, and the description says so."""
    from .answer import prepare_data  # the answer module imports the family table; sources stays below it

    sources = planner_sources(family)
    synthetic = next(name for name, src in sources.items() if not src.upload and src.bundled is None
                     and src.fields.get("dataset", "synthetic") == "synthetic")
    n, dim = upload_shape(dataset)
    fields = {**sources[source].fields, "dim": dim, **({} if k is None else {"k": k})}
    fields.pop("features", None)
    settings = FAMILIES[family].sweep.data(**{**sources[synthetic].fields, **fields})
    data = prepare_data(family, settings, None, seed)
    name = getattr(dataset, "name", "your file")
    return replace(data, description=f"public proxy of {name}: {data.description}; of {name} only its size (N = "
                   f"{n:,}) and dimension (D = {dim:,}) were read", key=f"proxy|{data.key}")
