#!/usr/bin/env python3
"""Checks the include rules of docs/design.md ("Layers") over the source tree.

Each folder may include only the folders its row names, and no two files may
include each other. Prints one line per violation and exits 1 when there is
any, so the rules cannot drift from the code unnoticed.
"""
import os
import re
import sys

# folder -> the folders of ours it may include (itself always allowed).
ALLOWED = {
    "base": [],
    "storage": ["base"],
    "engine": ["base", "storage"],
    "net/wire": ["base"],
    "net/core": ["base", "storage", "engine", "net/wire"],
    "net/http": ["base", "storage", "engine", "net/wire", "net/core"],
    "net/server": ["base", "storage", "engine", "net/wire", "net/core", "net/http"],
    "embedded": ["base", "storage", "engine", "net/wire", "net/core", "embedded/include/tarde"],
    "embedded/include/tarde": ["base"],
    "clients/cpp": ["base", "net/wire"],
    "tools/cli": ["base", "net/wire", "clients/cpp"],
    "tools/crash": ["base", "net/wire", "clients/cpp"],
    "tools/crash-embedded": ["base", "embedded/include/tarde"],
    "tools/dump": ["base", "storage", "engine"],
    "tools/fill": ["base", "storage", "engine"],
    "tools/bench": ["base", "storage", "engine", "net/wire"],
}
# Third-party headers a folder must not include (they stay private below it).
FORBIDDEN_SYSTEM = {
    "base": ["rocksdb/", "cereal/", "asio", "spdlog/"],
    "engine": ["rocksdb/", "cereal/", "asio", "spdlog/"],
    "net/wire": ["rocksdb/", "cereal/", "asio", "spdlog/"],
    "clients/cpp": ["rocksdb/", "cereal/", "spdlog/"],
    # The installed public headers: an application needs only tarde's package.
    "embedded/include/tarde": ["rocksdb/", "cereal/", "asio", "spdlog/"],
    "tools/crash-embedded": ["rocksdb/", "cereal/", "asio", "spdlog/"],
}
# Public headers are included as <tarde/NAME.h> (embedded/include/ is on the
# include path); they belong to the folder they live in.
PUBLIC_PREFIX = ("tarde/", "embedded/include/tarde/")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def folder_of(path):
    for folder in sorted(ALLOWED, key=len, reverse=True):
        if path.startswith(folder + "/"):
            return folder
    return None


def main(root):
    sources = []
    for folder in ALLOWED:
        base = os.path.join(root, folder)
        if not os.path.isdir(base):
            continue
        for name in sorted(os.listdir(base)):
            if name.endswith((".h", ".cc")):
                sources.append(folder + "/" + name)
    edges = set()
    problems = []
    for path in sources:
        folder = folder_of(path)
        with open(os.path.join(root, path), encoding="utf-8") as source:
            text = source.read()
        for kind, target in INCLUDE.findall(text):
            if kind == "<" and target.startswith(PUBLIC_PREFIX[0]):
                kind = '"'
            if kind == "<":
                for banned in FORBIDDEN_SYSTEM.get(folder, []):
                    if target.startswith(banned):
                        problems.append(f"{path}: includes <{target}>, private to a lower layer")
                continue
            if target.startswith(PUBLIC_PREFIX[0]):
                target = PUBLIC_PREFIX[1] + target[len(PUBLIC_PREFIX[0]):]
            edges.add((path, target))
            target_folder = folder_of(target)
            if target_folder is None:
                if not target.startswith("tests/"):
                    problems.append(f"{path}: includes {target}, outside every layer")
                continue
            if target_folder != folder and target_folder not in ALLOWED[folder]:
                problems.append(f"{path}: includes {target} ({folder} may not use {target_folder})")
    # Two files including each other, counting a .cc through its own header.
    def unit(path):
        return path.rsplit(".", 1)[0]
    unit_edges = {(unit(a), unit(b)) for a, b in edges if unit(a) != unit(b)}
    for a, b in sorted(unit_edges):
        if a < b and (b, a) in unit_edges:
            problems.append(f"{a} and {b} include each other")
    for problem in problems:
        print(problem)
    print(f"layers: {len(sources)} files checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
