"""One module per rule set (m209, zhenyan, m135, tubian24, nizhuan)."""
