#!/usr/bin/env python3
"""Refreshes the "```output" blocks of the API reference from what the examples print.

    docs/update_examples.py BUILD_DIR        (after building the doc_runner target)

ctest's "docs:" tests fail whenever an output block differs from what its example prints;
after a deliberate change, run this, read the diff (git diff docs/), and commit it.
"""
import pathlib
import re
import subprocess
import sys


def main():
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build")
    text = subprocess.run([str(build / "tests/docs/doc_runner"), "--print"], capture_output=True, text=True,
                          check=True).stdout
    outputs = {}
    for chunk in re.split(r"^@@ ", text, flags=re.M)[1:]:
        head, _, body = chunk.partition("\n")
        page, line = head.rsplit(":", 1)
        outputs[(page, int(line))] = body
    docs = pathlib.Path(__file__).resolve().parent
    for page in sorted({p for p, _ in outputs}):
        lines = (docs / page).read_text().split("\n")
        out, i = [], 0
        while i < len(lines):
            out.append(lines[i])
            if lines[i] == "```cpp example":
                first = i + 2  # 1-based line of the first code line
                i += 1
                while lines[i] != "```":
                    out.append(lines[i])
                    i += 1
                out.append(lines[i])
                i += 1
                while lines[i] == "":
                    out.append(lines[i])
                    i += 1
                assert lines[i] == "```output", f"{page}:{i + 1}: no output block"
                out.append(lines[i])
                i += 1
                while lines[i] != "```":
                    i += 1
                out.extend(outputs[(page, first)].rstrip("\n").split("\n") if outputs[(page, first)] else [])
                out.append("```")
            i += 1
        (docs / page).write_text("\n".join(out))
        print(f"updated {page}")


if __name__ == "__main__":
    main()
