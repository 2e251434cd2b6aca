#!/usr/bin/env python3
"""README and docs stay inside the repository, and README names what
scripts/deps.sh installs.

- Every Markdown link and image in README.md, CONTRIBUTING.md and docs/
  (outside code) points at a file of this repository that exists: no
  scheme (http:, https:, ...), nothing above the repository's root (a
  user's clone has nothing there; issue 15 found README linking to
  ../shared).
- README's dependency list names every package scripts/deps.sh installs,
  required and optional (issue 15 found libinih-dev missing).

argv: SOURCE_DIR
"""

import glob
import os
import re
import sys

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
AUTOLINK = re.compile(r"<(https?://[^>]+)>")


def prose(text):
    """text without fenced code blocks and inline code spans."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    text = re.sub(r"^    .*$", "", text, flags=re.M)  # indented code
    return re.sub(r"`[^`\n]*`", "", text)


def main():
    root = os.path.realpath(sys.argv[1])
    files = [os.path.join(root, "README.md"), os.path.join(root, "CONTRIBUTING.md")]
    files += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    bad = []
    links = 0
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = prose(f.read())
        rel = os.path.relpath(path, root)
        for url in AUTOLINK.findall(text):
            bad.append("%s: links outside the repository: %s" % (rel, url))
        for target in LINK.findall(text):
            links += 1
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
                bad.append("%s: links outside the repository: %s" % (rel, target))
                continue
            file_part = target.split("#", 1)[0]
            if not file_part:
                continue  # an anchor in the same page
            dest = os.path.realpath(os.path.join(os.path.dirname(path), file_part))
            if dest != root and not dest.startswith(root + os.sep):
                bad.append("%s: links above the repository's root: %s" % (rel, target))
            elif not os.path.exists(dest):
                bad.append("%s: links to a file that does not exist: %s" % (rel, target))

    with open(os.path.join(root, "scripts", "deps.sh"), encoding="utf-8") as f:
        deps = f.read()
    packages = []
    for var in ("REQUIRED", "OPTIONAL"):
        m = re.search(r'^%s="([^"]*)"' % var, deps, flags=re.M)
        if not m:
            bad.append("scripts/deps.sh: no %s list" % var)
            continue
        packages += m.group(1).replace("\\\n", " ").split()
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    m = re.search(r"^Dependencies .*?(?=^\s*$)", readme, flags=re.M | re.S)
    listed = {w.rstrip(".") for w in re.findall(r"[a-z0-9][a-z0-9.+-]*", m.group(0))} if m else set()
    for p in packages:
        if p not in listed:
            bad.append("README.md: the dependency list lacks %s (scripts/deps.sh installs it)" % p)

    for b in bad:
        print("FAIL: " + b)
    print("%d files, %d links, all inside the repository; README lists the %d packages of "
          "scripts/deps.sh" % (len(files), links, len(packages)) if not bad else
          "%d problem(s)" % len(bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
