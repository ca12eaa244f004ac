"""`--max-tokens`: fit ranked results from one or more topics into one token budget.

Every topic that matched shows its first result before any topic gets its second (DECISIONS 21):
the first results share the budget fairly — smallest first, each whole when it fits its share of
what is left, else cut to that share at a line boundary (or inside its first line at a cl100k
token boundary) and marked truncated. The rest are then taken round-robin in rank order (rank 2
of every topic, then rank 3, …); each is kept if it still fits, otherwise omitted, and a later,
smaller result may still fit. So a search that matched never comes back empty, and no topic that
matched is left with only its header.
"""

from collections.abc import Callable, Sequence
from typing import NamedTuple

from ra_query.artifacts.models import ChunkRecord
from ra_query.errors import InputError
from ra_query.text.tokens import count_tokens, encoding

MAX_BUDGET = 10_000_000  # tokens; far past any context window


class Budgeted(NamedTuple):
    """One kept result: `topic` is the topic's index, `rank` its 1-based rank within the topic.

    `text` is what to print — for a truncated result the cut text plus marker, not the record's
    full content — and `tokens` what it was charged.
    """

    topic: int
    rank: int
    record: ChunkRecord
    text: str
    tokens: int
    truncated: bool


class BudgetOutcome(NamedTuple):
    """The kept results (by topic, then rank) and what the budget did."""

    kept: tuple[Budgeted, ...]
    used_tokens: int
    omitted: int
    truncated: bool
    max_tokens: int | None


def truncation_marker(shown: int, total: int) -> str:
    """The last line of a truncated result."""
    return f"… [truncated: {shown} of {total} tokens shown]"


def apply_budget(
    topics: Sequence[Sequence[tuple[ChunkRecord, str]]],
    max_tokens: int | None,
    count: Callable[[str], int] = count_tokens,
) -> BudgetOutcome:
    """Keep what fits of each topic's ranked results within one token budget.

    Args:
        topics: per topic, its results in rank order as (record, text to charge for it).
        max_tokens: the budget; None keeps everything (tokens are still counted).
        count: the token counter (cl100k by default).

    Raises:
        InputError: `max_tokens` is less than 1.
    """
    if max_tokens is not None and not 1 <= max_tokens <= MAX_BUDGET:
        raise InputError(f"--max-tokens must be between 1 and {MAX_BUDGET}")
    kept: list[Budgeted] = []
    used = 0
    omitted = 0
    firsts = [(topic, results[0]) for topic, results in enumerate(topics) if results]
    costs = {topic: count(text) for topic, (_, text) in firsts}
    # smallest first: what a small first result leaves over goes to the larger ones
    for position, (topic, (record, text)) in enumerate(sorted(firsts, key=lambda f: (costs[f[0]], f[0]))):
        cost = costs[topic]
        share = cost if max_tokens is None else (max_tokens - used) // (len(firsts) - position)
        if cost <= share:
            kept.append(Budgeted(topic, 1, record, text, cost, truncated=False))
            used += cost
            continue
        cut = truncate(text, share, count, total=cost) if share > 0 else ""
        if cut:
            kept.append(Budgeted(topic, 1, record, cut, count(cut), truncated=True))
            used += kept[-1].tokens
        else:
            omitted += 1
    depth = max((len(results) for results in topics), default=0)
    for rank in range(1, depth):
        for topic, results in enumerate(topics):
            if rank >= len(results):
                continue
            record, text = results[rank]
            cost = count(text)
            if max_tokens is None or used + cost <= max_tokens:
                kept.append(Budgeted(topic, rank + 1, record, text, cost, truncated=False))
                used += cost
            else:
                omitted += 1
    kept.sort(key=lambda item: (item.topic, item.rank))
    return BudgetOutcome(
        kept=tuple(kept),
        used_tokens=used,
        omitted=omitted,
        truncated=any(item.truncated for item in kept),
        max_tokens=max_tokens,
    )


# a cl100k token is rarely longer than this many characters: a line cut inside is encoded only
# this far (a line of megabytes need not be encoded whole to cut its first thousand tokens)
CHARS_PER_TOKEN_AT_MOST = 16


def truncate(text: str, max_tokens: int, count: Callable[[str], int], total: int | None = None) -> str:
    """Cut `text` to at most `max_tokens`, ending with the truncation marker when it fits too.

    The cut falls at a line boundary; when not even the first non-blank line fits, or the lines
    that fit leave over half the budget unused and the next line would not fit, inside that line
    at a cl100k token boundary. The marker line is preferred over keeping more lines, as long
    as some of the text survives with it. Returns "" only if not one token of text fits.
    """
    total = count(text) if total is None else total
    lines = text.splitlines(keepends=True)

    def by_lines(k: int) -> str:
        return "".join(lines[:k]).rstrip("\r\n")

    def with_marker(cut: str) -> str:
        return f"{cut}\n{truncation_marker(count(cut), total)}"

    # the shortest cut worth showing ends with the first non-blank line
    first = next((i for i, line in enumerate(lines) if line.strip()), len(lines) - 1)
    prefix: Callable[[int], str] = by_lines
    low = first + 1
    most = _largest(low, len(lines), lambda k: count(by_lines(k)) <= max_tokens)
    if most is not None and most < len(lines) and count(by_lines(most)) < max_tokens // 2:
        # the next line alone is over half the budget (a line of megabytes): cut inside it
        head, line = "".join(lines[:most]), lines[most].rstrip("\r\n")
        pieces = encoding().encode_ordinary(line[: max_tokens * CHARS_PER_TOKEN_AT_MOST])

        def by_more(j: int) -> str:
            return head + encoding().decode_bytes(pieces[:j]).decode("utf-8", "ignore")

        more = _largest(1, len(pieces), lambda j: count(by_more(j)) <= max_tokens)
        if more is not None:
            prefix, most, low = by_more, more, 1
    if most is None:
        pieces = encoding().encode_ordinary(lines[first].rstrip("\r\n") if lines else "")

        def by_tokens(j: int) -> str:
            # a cut inside a multi-byte character drops the partial character
            return encoding().decode_bytes(pieces[:j]).decode("utf-8", "ignore")

        prefix, low = by_tokens, 1
        most = _largest(low, len(pieces), lambda j: count(by_tokens(j)) <= max_tokens)
        if most is None:
            return ""
    marked = _largest(low, most, lambda k: count(with_marker(prefix(k))) <= max_tokens)
    return prefix(most) if marked is None else with_marker(prefix(marked))


def _largest(low: int, high: int, fits: Callable[[int], bool]) -> int | None:
    """The largest k in low..high with fits(k), or None when fits(low) fails.

    Binary search assumes a longer prefix never costs less. Token counts are not strictly
    monotone in the prefix, so this may miss the very longest cut, but whatever it returns has
    been checked to fit.
    """
    if low > high or not fits(low):
        return None
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low
