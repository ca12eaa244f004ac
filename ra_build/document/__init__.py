"""One document: reading a markdown file and making its chunk tree."""
