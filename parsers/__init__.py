"""Pure parsers: bytes / HTML / JSON / text -> records. No network, no disk, no clock."""
