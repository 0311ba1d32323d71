"""A page's elements, ids and text, read with the standard library's HTML parser."""

from __future__ import annotations

from html.parser import HTMLParser


class Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.title = ""
        self.texts: list[str] = []
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        self._in_title = tag == "title"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        self.texts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.texts)

    def ids(self) -> set[str]:
        return {str(a["id"]) for _, a in self.elements if a.get("id")}

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.elements if t == name]


def parse(html: str) -> Dom:
    dom = Dom()
    dom.feed(html)
    dom.close()
    return dom
