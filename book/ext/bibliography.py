"""Author-year bibliography labels and citations.

The pybtex style ``flt_authoryear`` formats entries like ``plain`` but labels them
"Author, Year" ("Krotov and Hopfield, 2016", "Jacot et al., 2018"), the form the text's
``{cite:p}``/``{cite:t}`` use, so that the list and the citations agree. Works by the
same authors in the same year get 1986a, 1986b, ..., and the reference style
``flt_author_year`` cites them with that letter too. ``_config.yml`` selects both
(``bibtex_default_style``, ``bibtex_reference_style``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["author_year_label", "register_styles", "setup"]


def register_styles() -> None:
    """Register the label, formatting and reference styles with pybtex and
    sphinxcontrib-bibtex."""
    from pybtex.plugin import register_plugin
    from pybtex.style.formatting.plain import Style as PlainStyle
    from pybtex.style.labels import BaseLabelStyle

    class AuthorYearLabels(BaseLabelStyle):
        """Labels "Author, Year", "A and B, Year", "A et al., Year"; a, b, ... on
        clashes."""

        def format_labels(self, sorted_entries):
            labels = [author_year_label(entry) for entry in sorted_entries]
            counts = {label: labels.count(label) for label in labels}
            seen: dict[str, int] = {}
            for label in labels:
                if counts[label] > 1:
                    seen[label] = seen.get(label, 0) + 1
                    yield label + "abcdefghijklmnopqrstuvwxyz"[seen[label] - 1]
                else:
                    yield label

    class AuthorYearStyle(PlainStyle):
        default_label_style = "flt_authoryear"

    register_plugin(
        "pybtex.style.labels", "flt_authoryear", AuthorYearLabels, force=True
    )
    register_plugin(
        "pybtex.style.formatting", "flt_authoryear", AuthorYearStyle, force=True
    )
    _register_reference_style()


def _register_reference_style() -> None:
    """``flt_author_year``: sphinxcontrib-bibtex's author_year, with the label's
    year."""
    from pybtex.richtext import Text
    from pybtex.style.template import join, node
    from sphinxcontrib.bibtex.plugin import register_plugin
    from sphinxcontrib.bibtex.style.referencing import author_year as ay
    from sphinxcontrib.bibtex.style.referencing import basic_author_year as bay
    from sphinxcontrib.bibtex.style.template import (
        join2,
        post_text,
        pre_text,
        reference,
    )

    @node
    def label_year(children: Any, data: dict) -> Any:
        """The year as the bibliography's label shows it: '1986b' when there are
        several."""
        assert not children
        return Text(str(data["formatted_entry"].label).rsplit(", ", 1)[-1])

    class Parenthetical(bay.BasicAuthorYearParentheticalReferenceStyle):
        def inner(self, role_name: str) -> Any:
            return join2(sep1=self.pre_text_sep, sep2=self.post_text_sep)[
                pre_text,
                reference[
                    join(sep=self.author_year_sep)[
                        self.person.author_or_editor_or_title(full="s" in role_name),
                        label_year,
                    ]
                ],
                post_text,
            ]

    class Textual(bay.BasicAuthorYearTextualReferenceStyle):
        def inner(self, role_name: str) -> Any:
            return join(sep=self.text_reference_sep)[
                self.person.author_or_editor_or_title(full="s" in role_name),
                join[
                    self.bracket.left,
                    join2(sep1=self.pre_text_sep, sep2=self.post_text_sep)[
                        pre_text, reference[label_year], post_text
                    ],
                    self.bracket.right,
                ],
            ]

    class LabelYearReferenceStyle(ay.AuthorYearReferenceStyle):
        def __post_init__(self) -> None:
            super().__post_init__()
            for k, style in enumerate(self.styles):
                if type(style) is bay.BasicAuthorYearParentheticalReferenceStyle:
                    self.styles[k] = Parenthetical(
                        bracket=style.bracket,
                        person=style.person,
                        author_year_sep=style.author_year_sep,
                        pre_text_sep=style.pre_text_sep,
                        post_text_sep=style.post_text_sep,
                    )
                elif type(style) is bay.BasicAuthorYearTextualReferenceStyle:
                    self.styles[k] = Textual(
                        bracket=style.bracket,
                        person=style.person,
                        text_reference_sep=style.text_reference_sep,
                        pre_text_sep=style.pre_text_sep,
                        post_text_sep=style.post_text_sep,
                    )
            self.role_style.update(  # the role -> style map was built from the old list
                (role, style)
                for style in self.styles[:2]
                for role in style.role_names()
            )

    register_plugin(
        "sphinxcontrib.bibtex.style.referencing",
        "flt_author_year",
        LabelYearReferenceStyle,
        force=True,
    )


def _last_name(person: Any) -> str:
    from pybtex.richtext import Text

    parts = person.rich_prelast_names + person.rich_last_names
    return Text(" ").join(parts).render_as("text") if parts else str(person)


def author_year_label(entry: Any) -> str:
    """'Hopfield, 1982', 'Krotov and Hopfield, 2016', 'Jacot et al., 2018' for an
    entry."""
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [_last_name(p) for p in persons]
    if not names:
        who = (
            entry.fields.get("organization")
            or entry.fields.get("title", entry.key)[:20]
        )
    elif len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who}, {entry.fields.get('year', 'n.d.')}"


def setup(app: Any) -> dict[str, Any]:
    """Register the styles (loaded by :mod:`book.ext`)."""
    register_styles()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
