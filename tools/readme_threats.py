"""README.md's account of what a real run (Flower) protects against, quoted from docs/federated.md's threat model.

The README says what a real run protects against in the same words as docs/federated.md: the whole section
"## Threat model" of docs/federated.md (its table and whatever follows it up to the next section), quoted between the
markers below, with its relative links pointed at docs/. ``python tools/readme_threats.py`` prints the quote,
``--write`` puts it into README.md between the markers; ``tests/test_readme.py`` fails, naming this command, when the
two differ (after any change of the threat model). The section must hold a table: a threat model without one is
refused rather than quoted.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "docs" / "federated.md"
README = ROOT / "README.md"
HEADING = "## Threat model"
BEGIN = ("<!-- threat model: quoted by tools/readme_threats.py from docs/federated.md, section 'Threat model'; do not "
         "edit by hand -->")
END = "<!-- end of the threat model -->"
_LINK = re.compile(r"\]\((?!https?://|#|/)([^)]+)\)")


class ThreatModelError(ValueError):
    """docs/federated.md has no threat-model section with a table, or README.md lacks the markers."""


def section(text: str) -> list[str]:
    """The lines of the threat-model section of ``text`` (docs/federated.md), without its heading and the blank lines
    around it; refused when there is no such section or it has no table."""
    lines = text.splitlines()
    try:
        start = lines.index(HEADING) + 1
    except ValueError:
        raise ThreatModelError(f"docs/federated.md has no section {HEADING!r}") from None
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    body = lines[start:end]
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    if not any(line.startswith("|") for line in body):
        raise ThreatModelError(f"the section {HEADING!r} of docs/federated.md has no table to quote")
    return body


def table(text: str) -> list[list[str]]:
    """The rows of the section's first table (header first, separator left out), as lists of cells."""
    rows = []
    for line in section(text):
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set(":- ") for c in cells):
                rows.append(cells)
        elif rows:
            break
    return rows


def render(text: str | None = None) -> str:
    """The quote as it belongs between the markers of README.md: every line of the section as a block quote, links
    relative to docs/ made relative to the repository's top folder."""
    text = SOURCE.read_text(encoding="utf-8") if text is None else text
    quoted = [("> " + _LINK.sub(lambda m: f"](docs/{m.group(1)})", line)).rstrip() for line in section(text)]
    return "\n".join([BEGIN, *quoted, END])


def current(readme: str | None = None) -> str:
    """What README.md holds between the markers (the markers included)."""
    readme = README.read_text(encoding="utf-8") if readme is None else readme
    if BEGIN not in readme or END not in readme:
        raise ThreatModelError("README.md lacks the threat-model markers")
    start = readme.index(BEGIN)
    return readme[start:readme.index(END, start) + len(END)]


def write() -> bool:
    """Put :func:`render` into README.md; True when it changed."""
    readme = README.read_text(encoding="utf-8")
    new = readme.replace(current(readme), render())
    if new != readme:
        README.write_text(new, encoding="utf-8")
    return new != readme


def main(argv: list[str]) -> int:
    try:
        if "--write" in argv:
            print("README.md updated" if write() else "README.md already up to date")
        else:
            print(render())
    except ThreatModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
