"""The edges: game files, the Discuz client, crawl, the SQLite store, the CLI."""
