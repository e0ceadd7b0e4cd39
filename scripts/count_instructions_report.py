"""Reads a callgrind file of a W1 run and the server's STATS after it, and
prints instructions per command: in total, the functions that spend the
most, and the counts that explain RocksDB's share (memtable inserts,
allocations). Used by scripts/count-instructions."""

import collections
import re
import subprocess
import sys

# callgrind names each function once as "(id) name" and then by "(id)" alone.
NAME = re.compile(r"\((\d+)\)(?: (.*))?")


def call_counts(path):
    """Calls made to each function, summed over its callers."""
    names = {}
    callee = None
    calls = collections.Counter()

    def name_of(token):
        match = NAME.match(token)
        if not match:
            return token
        if match.group(2):
            names[match.group(1)] = match.group(2)
        return names.get(match.group(1), token)

    with open(path, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if line.startswith("fn="):
                name_of(line[3:].rstrip("\n"))
            elif line.startswith("cfn="):
                callee = name_of(line[4:].rstrip("\n"))
            elif line.startswith("calls=") and callee is not None:
                calls[callee] += int(line[6:].split()[0])
    return calls


def commands_of(stats_path):
    with open(stats_path, encoding="utf-8") as stats:
        for line in stats:
            words = line.split()
            if len(words) >= 2 and words[0] == "commands":
                return int(words[1])
    raise SystemExit("count-instructions: no 'commands' line in " + stats_path)


def top_functions(path, count):
    """callgrind_annotate's exclusive list: (instructions, name) pairs."""
    text = subprocess.run(["callgrind_annotate", path], capture_output=True, text=True,
                          check=True).stdout
    total = None
    rows = []
    listing = False
    for line in text.splitlines():
        if "PROGRAM TOTALS" in line:
            total = int(line.split()[0].replace(",", ""))
        elif "file:function" in line:
            listing = True
        elif listing and line.strip() and not line.startswith("-"):
            figure, _, rest = line.strip().partition(" ")
            name = rest.split(":", 1)[-1].split(" [")[0]
            rows.append((int(figure.replace(",", "")), name))
            if len(rows) == count:
                break
    return total, rows


def background_instructions(path):
    """Inclusive instructions of RocksDB's flushes and compactions: whether
    one falls inside a short run is chance, so the report shows the total
    with and without them."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", path], capture_output=True,
                          text=True, check=True).stdout
    found = 0
    for line in text.splitlines():
        if "rocksdb::FlushJob::Run(" in line or "rocksdb::CompactionJob::Run(" in line:
            figure = line.strip().split(" ", 1)[0].replace(",", "")
            if figure.isdigit():
                found += int(figure)
    return found


def main():
    callgrind_path, stats_path = sys.argv[1], sys.argv[2]
    commands = commands_of(stats_path)
    total, rows = top_functions(callgrind_path, 20)
    if not total or not commands:
        raise SystemExit("count-instructions: nothing was counted")
    calls = call_counts(callgrind_path)

    def calls_to(fragment):
        return sum(n for name, n in calls.items() if fragment in name)

    inserts = calls_to("rocksdb::MemTable::Add(")
    allocations = sum(n for name, n in calls.items() if name.startswith("operator new"))
    background = background_instructions(callgrind_path)
    print(f"{commands} commands, {total / commands:,.0f} instructions per command "
          f"(user space, every thread)")
    print(f"of which RocksDB's flushes and compactions {background / commands:,.0f}; "
          f"without them {(total - background) / commands:,.0f}\n")
    print("| per command | count |\n|---|---:|")
    print(f"| memtable inserts | {inserts / commands:.2f} |")
    print(f"| operator new | {allocations / commands:.1f} |\n")
    print("| function | instructions per command | share |\n|---|---:|---:|")
    for figure, name in rows:
        print(f"| `{name[:90]}` | {figure / commands:,.0f} | {100 * figure / total:.1f} % |")


if __name__ == "__main__":
    main()
