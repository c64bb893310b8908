"""Every internal link of the built websites leads somewhere (`make browser-test`).

Reads every HTML page of the full site (``_build/html``, or ``FLT_SITE``) and of the
student edition (``_build/student/html``, after `make student`), and follows every
``href`` and ``src`` that stays on the site: the file must exist, and a ``#fragment``
must be an ``id`` (or ``name``) on the page it points to. A link from a statement's
title in the index of statements to ``../bibliography.html#id65``, one folder too high,
failed here. No browser is needed; it runs with the browser test because it needs the
built site.
"""

from __future__ import annotations

import html.parser
import os
import posixpath
import urllib.parse
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import ROOT

FULL = Path(os.environ.get("FLT_SITE", ROOT / "_build" / "html")).resolve()
STUDENT = ROOT / "_build" / "student" / "html"
SKIP_DIRS = {"mathjax", "_sources", "_static"}  # MathJax, sources, theme templates
# The header's button links the book's PDF in the site's root; `make pdf` puts it there.
PDF = "book.pdf"

pytestmark = pytest.mark.skipif(
    not os.environ.get("FLT_BROWSER_TEST"),
    reason="link check of the built site: run `make browser-test`",
)


class _Page(html.parser.HTMLParser):
    """The ids of a page and the links on it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("id", "name") if tag != "meta" else ():
            if a.get(key):
                self.ids.add(a[key])
        for key in ("href", "src"):
            if a.get(key) and not (tag == "link" and key == "href" and
                                   a.get("rel") in ("preconnect", "dns-prefetch")):
                self.links.append(a[key])


def _internal(link: str) -> bool:
    scheme = urllib.parse.urlsplit(link).scheme
    return not scheme and not link.startswith("//")


def broken_links(site: Path) -> tuple[int, list[str]]:
    """(number of internal links followed, "page -> link: why" for each broken one)."""
    pages: dict[Path, _Page] = {}

    def parse(path: Path) -> _Page:
        if path not in pages:
            page = _Page()
            page.feed(path.read_text(encoding="utf-8", errors="replace"))
            pages[path] = page
        return pages[path]

    sources = [
        p for p in sorted(site.rglob("*.html"))
        if not SKIP_DIRS & set(p.relative_to(site).parts)
    ]
    broken: dict[str, set[str]] = defaultdict(set)
    followed = 0
    for source in sources:
        rel = source.relative_to(site).as_posix()
        for link in parse(source).links:
            if not _internal(link):
                continue
            followed += 1
            parts = urllib.parse.urlsplit(link)
            path = urllib.parse.unquote(parts.path)
            target = (
                source
                if not path
                else site / posixpath.normpath(posixpath.join(posixpath.dirname(rel), path))
            )
            if path and not str(target.resolve()).startswith(str(site)):
                broken[rel].add(f"{link}: leaves the site")
                continue
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                if posixpath.basename(path) == PDF and not (site / PDF).exists():
                    continue  # checked by test_the_pdf_is_published
                broken[rel].add(f"{link}: no such file")
                continue
            frag = urllib.parse.unquote(parts.fragment)
            if frag and target.suffix == ".html" and frag not in parse(target).ids:
                broken[rel].add(f"{link}: no id {frag!r} in {target.relative_to(site)}")
    return followed, [f"{page} -> {why}" for page in sorted(broken) for why in sorted(broken[page])]


def test_broken_links_are_found(tmp_path):
    """The checker itself: a missing page, a missing anchor and a link one folder too
    high are found; good links are not."""
    (tmp_path / "ch").mkdir()
    (tmp_path / "bib.html").write_text('<p id="id65">x</p>', encoding="utf-8")
    (tmp_path / "ch" / "a.html").write_text(
        '<a href="../bib.html#id65">ok</a> <a href="#here" id="here">self</a>'
        '<a href="https://example.org/x">out</a> <img src="../bib.html">'
        '<a href="../../bib.html#id65">too high</a> <a href="../bib.html#id66">anchor</a>'
        '<a href="b.html">missing</a>',
        encoding="utf-8",
    )
    followed, broken = broken_links(tmp_path)
    assert followed == 6
    assert broken == [
        "ch/a.html -> ../../bib.html#id65: leaves the site",
        "ch/a.html -> ../bib.html#id66: no id 'id66' in bib.html",
        "ch/a.html -> b.html: no such file",
    ]


@pytest.mark.parametrize("name", ["full", "student"])
def test_every_internal_link_and_anchor_resolves(name):
    site = FULL if name == "full" else STUDENT
    if not (site / "index.html").exists():
        if name == "student":
            pytest.skip("no student site: run `make student` first")
        pytest.fail(f"no built site in {site}: run `make book` first")
    followed, broken = broken_links(site)
    assert followed > 1000, f"only {followed} internal links found in {site}"
    assert not broken, f"{len(broken)} broken links of {followed} in {site}:\n  " + "\n  ".join(
        broken[:30]
    )


def test_the_pdf_is_published():
    """After `make pdf`, the site holds the PDF its header links."""
    if not (ROOT / "_build" / "latex" / PDF).exists():
        pytest.skip("no PDF built: `make pdf` builds it and copies it into the site")
    assert (FULL / PDF).exists(), f"{FULL / PDF} missing: `make pdf` copies it there"
