"""Pure game logic: vote validity and tally, conduct, night resolution, win checks."""
