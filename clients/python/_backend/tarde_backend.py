"""A PEP 517 build backend for the tarde client, using only the standard library.

The package is pure Python with no dependencies, so it needs no setuptools
or wheel package to build: ``pip install ./clients/python`` works offline,
in a fresh virtual environment of any Python >= 3.9, with or without build
isolation. The metadata comes from the ``[project]`` table of
pyproject.toml (only the plain ``key = "value"`` fields below are read).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "tarde"
TAG = "py3-none-any"


def _project() -> Dict[str, str]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if not section:
        raise RuntimeError("pyproject.toml has no [project] table")
    fields = dict(re.findall(r'^([A-Za-z][A-Za-z0-9_-]*)\s*=\s*"([^"]*)"\s*$', section.group(1), re.M))
    for key in ("name", "version", "description", "requires-python", "readme"):
        if key not in fields:
            raise RuntimeError(f"pyproject.toml [project] needs {key} = \"...\"")
    classifiers = re.search(r"^classifiers\s*=\s*\[(.*?)\]", section.group(1), re.M | re.S)
    fields["classifiers"] = "\n".join(re.findall(r'"([^"]+)"', classifiers.group(1))) if classifiers else ""
    return fields


def _metadata() -> str:
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {p['version']}",
        f"Summary: {p['description']}",
        f"Requires-Python: {p['requires-python']}",
    ]
    lines += [f"Classifier: {c}" for c in p["classifiers"].splitlines() if c]
    lines.append("Description-Content-Type: text/markdown")
    readme = (ROOT / p["readme"]).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + readme


def _names() -> Tuple[str, str]:
    p = _project()
    dist = re.sub(r"[-_.]+", "_", p["name"]).lower()
    return dist, p["version"]


def _package_files() -> List[Path]:
    out = []
    for path in sorted((ROOT / PACKAGE).rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo"):
            out.append(path)
    return out


def _dist_info_files() -> Dict[str, bytes]:
    dist, version = _names()
    wheel = f"Wheel-Version: 1.0\nGenerator: tarde_backend\nRoot-Is-Purelib: true\nTag: {TAG}\n"
    return {
        "METADATA": _metadata().encode("utf-8"),
        "WHEEL": wheel.encode("ascii"),
        "top_level.txt": f"{PACKAGE}\n".encode("ascii"),
    }


def _zip_info(name: str) -> zipfile.ZipInfo:
    # Fixed time stamps: the same sources give the same wheel.
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    info = zipfile.ZipInfo(name, date_time=time.gmtime(max(epoch, 315532800))[:6])
    info.external_attr = 0o644 << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"{name},sha256={digest},{len(data)}"


# ------------------------------------------------------------------ PEP 517 hooks


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    dist, version = _names()
    dist_info = f"{dist}-{version}.dist-info"
    target = Path(metadata_directory) / dist_info
    target.mkdir(parents=True, exist_ok=True)
    for name, data in _dist_info_files().items():
        (target / name).write_bytes(data)
    return dist_info


def build_wheel(
    wheel_directory: str,
    config_settings: Optional[Dict[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    dist, version = _names()
    dist_info = f"{dist}-{version}.dist-info"
    filename = f"{dist}-{version}-{TAG}.whl"
    entries: List[Tuple[str, bytes]] = []
    for path in _package_files():
        entries.append((path.relative_to(ROOT).as_posix(), path.read_bytes()))
    for name, data in _dist_info_files().items():
        entries.append((f"{dist_info}/{name}", data))
    record = [_record_line(name, data) for name, data in entries]
    record.append(f"{dist_info}/RECORD,,")
    entries.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode("utf-8")))
    Path(wheel_directory).mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(Path(wheel_directory) / filename, "w") as zf:
        for name, data in entries:
            zf.writestr(_zip_info(name), data)
    return filename


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    dist, version = _names()
    base = f"{dist}-{version}"
    files = [ROOT / "pyproject.toml", ROOT / "README.md", Path(__file__).resolve(), *_package_files()]
    Path(sdist_directory).mkdir(parents=True, exist_ok=True)
    filename = f"{base}.tar.gz"
    with tarfile.open(Path(sdist_directory) / filename, "w:gz", format=tarfile.PAX_FORMAT) as tf:
        pkg_info = ("\n".join(_metadata().split("\n\n", 1)[0].splitlines()) + "\n").encode("utf-8")
        for name, data in [("PKG-INFO", pkg_info)] + [
            (f.relative_to(ROOT).as_posix(), f.read_bytes()) for f in files
        ]:
            info = tarfile.TarInfo(f"{base}/{name}")
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 315532800
            tf.addfile(info, io.BytesIO(data))
    return filename
