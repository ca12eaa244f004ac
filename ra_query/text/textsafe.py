"""Text from documents made safe to print: no control character reaches a terminal (issue 10).

A heading or body may hold escape sequences (`\\x1b]0;…`, `\\x1b[2J`) or other control
characters that a terminal would obey. Text output shows them escaped (`\\x1b`), as JSON
does; tabs and line breaks stay, and a CRLF line ending is read as a line break.
"""

_ESCAPES = {
    code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if code not in (0x09, 0x0A)
}


def printable(text: str) -> str:
    """`text` with its control characters (but tab and newline) shown as `\\xNN`."""
    if text.isprintable():
        return text
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return text.translate(_ESCAPES)


_C1 = {code: f"\\u{code:04x}" for code in range(0x80, 0xA0)}


def c1_escaped(json_text: str) -> str:
    """JSON text with its C1 control characters escaped (`\\u009b`): JSON encoders escape only
    those below 0x20, and a terminal may obey U+009B as an escape sequence's start."""
    return json_text.translate(_C1)
