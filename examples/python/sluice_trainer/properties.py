"""Reading the ``.properties`` files the pipeline's JVMs write (``java.util.Properties.store``)."""

from __future__ import annotations

import pathlib
import re
from typing import Dict, Union

__all__ = ["load"]

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(text: str) -> str:
    def one(m: "re.Match[str]") -> str:
        c = m.group(1)
        if c.startswith("u"):
            return chr(int(c[1:], 16))
        return _ESCAPES.get(c, c)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", one, text)


def load(path: Union[str, pathlib.Path]) -> Dict[str, str]:
    """The keys and values of the file ``store`` wrote: one entry a line, ``#`` comments, ``\\``
    escapes (``store`` escapes ``:``, ``=``, spaces in keys and non-ASCII characters)."""
    out: Dict[str, str] = {}
    for line in pathlib.Path(path).read_text(encoding="latin-1").splitlines():
        if not line.strip() or line.lstrip().startswith(("#", "!")):
            continue
        m = re.match(r"((?:[^=:\\]|\\.)*)[=:](.*)", line)
        if m is None:
            out[_unescape(line.strip())] = ""
        else:
            out[_unescape(m.group(1).strip())] = _unescape(m.group(2))
    return out
