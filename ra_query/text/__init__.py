"""Text helpers both sides share: token counts, GitHub slugs, text safe to print."""
