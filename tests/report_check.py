#!/usr/bin/env python3
"""Checks a `wstune report` directory: index.html and every *.svg parse as
XML, every chart the page references exists, no <script>, and each
--expect FILE=TITLE is the text of some <title> in FILE.
Usage: report_check.py DIR [--expect FILE=TITLE ...] [--contains TEXT ...]"""
import os
import sys
import xml.etree.ElementTree as ET

def main(argv):
    d = argv[1]
    expects, contains = [], []
    i = 2
    while i < len(argv):
        if argv[i] == "--expect":
            expects.append(argv[i + 1].split("=", 1)); i += 2
        elif argv[i] == "--contains":
            contains.append(argv[i + 1]); i += 2
        else:
            sys.exit(f"report_check: unknown argument {argv[i]}")
    problems = []
    titles = {}
    for name in sorted(os.listdir(d)):
        if not name.endswith((".html", ".svg")):
            continue
        try:
            root = ET.parse(os.path.join(d, name)).getroot()
        except ET.ParseError as e:
            problems.append(f"{name}: not well-formed XML: {e}")
            continue
        titles[name] = [el.text or "" for el in root.iter() if el.tag.split("}")[-1] == "title"]
        if any(el.tag.split("}")[-1] == "script" for el in root.iter()):
            problems.append(f"{name}: has a <script>")
    if "index.html" not in titles:
        problems.append("index.html missing or unreadable")
    else:
        page = open(os.path.join(d, "index.html"), encoding="utf-8").read()
        for el in ET.parse(os.path.join(d, "index.html")).getroot().iter():
            if el.tag == "img" and not os.path.exists(os.path.join(d, el.get("src", ""))):
                problems.append(f"index.html references a missing {el.get('src')}")
        for text in contains:
            if text not in page:
                problems.append(f"index.html lacks {text!r}")
    for f, t in expects:
        if t not in titles.get(f, []):
            problems.append(f"{f}: no <title>{t}</title> (have {titles.get(f)})")
    for p in problems:
        print("FAIL:", p)
    print(f"checked {len(titles)} files, {len(problems)} problems")
    return 1 if problems else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv))
