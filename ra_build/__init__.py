"""ra_build: configuration, discovery, parsing, chunking, tables, the tantivy index, and the
`ra` command line. It may import ra_query (the artifact contract); never the other way round."""
