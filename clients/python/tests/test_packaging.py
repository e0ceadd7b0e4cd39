"""The in-tree build backend makes an installable wheel with every module and py.typed."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

import tarde

from .support import PYTHON_ROOT


def load_backend():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("tarde_backend", PYTHON_ROOT / "_backend" / "tarde_backend.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class PackagingTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="tarde-pkg-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.backend = load_backend()

    def test_wheel_contents_and_record(self) -> None:
        name = self.backend.build_wheel(str(self.tmp))
        self.assertEqual(name, f"tarde-{tarde.__version__}-py3-none-any.whl")
        with zipfile.ZipFile(self.tmp / name) as zf:
            names = set(zf.namelist())
            modules = {f"tarde/{p.name}" for p in (PYTHON_ROOT / "tarde").iterdir() if p.suffix == ".py"}
            self.assertTrue(modules <= names, modules - names)
            self.assertIn("tarde/py.typed", names)
            self.assertFalse([n for n in names if "__pycache__" in n or n.startswith("tests/")])
            dist_info = f"tarde-{tarde.__version__}.dist-info"
            metadata = zf.read(f"{dist_info}/METADATA").decode()
            self.assertIn(f"Version: {tarde.__version__}\n", metadata)
            self.assertIn("Requires-Python: >=3.9\n", metadata)
            record = zf.read(f"{dist_info}/RECORD").decode().splitlines()
            self.assertEqual(len(record), len(names))
            for line in record:
                path, digest, size = line.rsplit(",", 2)
                if path.endswith("RECORD"):
                    continue
                data = zf.read(path)
                expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual((digest, int(size)), (f"sha256={expected}", len(data)), path)

    def test_pip_installs_the_wheel(self) -> None:
        name = self.backend.build_wheel(str(self.tmp / "dist"))
        target = self.tmp / "site"
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--quiet", "--target", str(target), str(self.tmp / "dist" / name)],
            check=True,
            capture_output=True,
            timeout=120,
        )
        out = subprocess.run(
            [sys.executable, "-c", "import tarde, tarde.aio; print(tarde.__file__); print(tarde.Client.__name__)"],
            cwd=str(self.tmp),
            env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
            check=True,
            capture_output=True,
            timeout=60,
        ).stdout.decode().splitlines()
        self.assertTrue(out[0].startswith(str(target)), out)
        self.assertEqual(out[1], "Client")

    def test_sdist(self) -> None:
        import tarfile

        name = self.backend.build_sdist(str(self.tmp))
        with tarfile.open(self.tmp / name) as tf:
            names = set(tf.getnames())
        base = f"tarde-{tarde.__version__}"
        for needed in ("PKG-INFO", "pyproject.toml", "README.md", "_backend/tarde_backend.py", "tarde/__init__.py", "tarde/py.typed"):
            self.assertIn(f"{base}/{needed}", names)


class ReadmeTest(unittest.TestCase):
    def test_python_snippets_compile_and_name_real_api(self) -> None:
        import re

        text = (PYTHON_ROOT / "README.md").read_text()
        blocks = re.findall(r"```python\n(.*?)```", text, re.S)
        self.assertTrue(blocks)
        for block in blocks:
            compile(block, "README.md", "exec")
            for name in re.findall(r"\btarde\.(\w+)", block):
                self.assertTrue(hasattr(tarde, name), name)
