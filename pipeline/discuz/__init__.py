"""discuz."""
