"""The pruned list's side files: the master configs the server knows, and the check that a
search-space YAML is a valid InferenceX master config before it is shown or downloaded."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from analysis.sweep.sweep_config import SweepConfig, validate_sweep_config
from ingest.store import Store
from ingest.untrusted.yaml_load import load_yaml

__all__ = ["MASTERS_DIR", "load_master", "master_configs", "master_path", "yaml_problem"]

# Master configs the pruned list may reuse keys from: files the server knows, in this folder of
# the store (a browser picks one by name, `master=nvidia-master.yaml`; it never sends a path).
MASTERS_DIR = "master-configs"


def master_configs(store: Store) -> dict[str, Path]:
    """The master configs the server knows: name -> file (`<store>/master-configs/*.yaml`)."""
    folder = store.root / MASTERS_DIR
    if not folder.is_dir():
        return {}
    files = sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
    return {p.name: p for p in files}


def master_path(store: Store, name: str) -> Path:
    """The file of a known master config.

    Raises:
        ValueError: the name is not one the server knows (the known ones are listed).
    """
    known = master_configs(store)
    path = known.get(name)
    if path is None:
        names = ", ".join(known) or f"none: put them in {store.root / MASTERS_DIR}"
        raise ValueError(f"{name!r} is not a master config this server knows (known: {names})")
    return path


def load_master(path: Path) -> SweepConfig:
    """A master config file, validated.

    Raises:
        ValueError: the file is not a valid master config (the reason).
    """
    try:
        return validate_sweep_config(load_yaml(path.read_text(encoding="utf-8")))
    except (yaml.YAMLError, ValidationError) as exc:
        raise ValueError(f"master config {path.name} is not valid: {exc}") from exc


def yaml_problem(text: str) -> str | None:
    """Why a search-space YAML text is not a valid InferenceX master config (None when it is;
    `analysis.sweep.sweep_config.validate_sweep_config` on the text read back)."""
    try:
        doc = load_yaml(text)
    except yaml.YAMLError as exc:
        return f"the YAML does not parse: {exc}"
    if doc is None:
        return "no arm could be exported, so there is no search space to show"
    try:
        validate_sweep_config(doc)
    except ValidationError as exc:
        errors = exc.errors()
        if not errors:
            return f"not a valid master config: {exc}"
        where = ".".join(str(p) for p in errors[0]["loc"])
        return f"not a valid master config: {where}: {errors[0]['msg']}"
    return None
