#!/usr/bin/env python3
"""Lists C++ functions by length (lines from the signature to the closing brace), longest first.

  scripts/function-lengths.py [--over N] [PATH ...]     (default: cost_models sim app calibrate, over 80)

A function is a brace block whose opening follows a parameter list and that sits directly in a
namespace, a class or the file (lambdas and blocks inside a function count toward that function).
A heuristic on the text, not a parser: strings, characters and comments are blanked first.
Exit 1 when any function is over --fail N (for CI), else 0.
"""
import argparse
import os
import re
import sys

CONTROL = re.compile(r"^\s*(if|for|while|switch|catch|else|do|return)\b")


def blank(text):
    """Replaces comments, string and character literals with spaces (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (j + 1 - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    text = blank(open(path, encoding="utf-8", errors="replace").read())
    stack = []   # (kind, start_line, name)
    last_stmt_end = 0   # index after the last ; { or } at the current level
    line = 1
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            head = text[last_stmt_end:i]
            enclosing_is_fn = any(k == "fn" for k, _, _ in stack)
            kind = "block"
            name = ""
            if not enclosing_is_fn and ")" in head and not CONTROL.match(head) and "=" not in head.split("(")[0]:
                kind = "fn"
                m = re.search(r"([~\w:<>]+)\s*\(", head)
                name = m.group(1) if m else "?"
                start = line - head.lstrip().count("\n")   # the signature's first line
            elif re.search(r"\b(namespace|struct|class|union|enum)\b", head):
                kind = "scope"
                start = line
            else:
                start = line
            stack.append((kind, start, name))
            last_stmt_end = i + 1
        elif c == "}":
            if stack:
                kind, start, name = stack.pop()
                if kind == "fn":
                    yield line - start + 1, name, start
            last_stmt_end = i + 1
        elif c == ";":
            last_stmt_end = i + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="*", default=["cost_models", "sim", "app", "calibrate"])
    ap.add_argument("--over", type=int, default=80)
    ap.add_argument("--fail", type=int, default=0)
    args = ap.parse_args()
    rows = []
    for root in args.paths:
        files = [root] if os.path.isfile(root) else [
            os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith((".cpp", ".hpp", ".cu"))]
        for f in sorted(files):
            rows += [(n, f"{f}:{start}", name) for n, name, start in functions(f)]
    rows.sort(reverse=True)
    bad = 0
    for n, where, name in rows:
        if n > args.over:
            print(f"{n:5d}  {where}  {name}")
        if args.fail and n > args.fail:
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
