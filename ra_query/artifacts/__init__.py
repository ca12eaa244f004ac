"""The artifact contract, read-only: file names, the tantivy schema, opening a store, packs."""
