"""The artifact directory as the build writes it: layout, Parquet tables, atomic writes, packs."""
