"""ra_query: the read-only side of ra — open index artifacts and answer queries.

This package never imports ra_build, doit, pyarrow or markdown-it at module level, so that
`ra-query` starts fast and runs where the build dependencies are absent.
"""
