"""Configuration: the `.ra.toml` model, reading and merging it, and what a build derives from it."""
