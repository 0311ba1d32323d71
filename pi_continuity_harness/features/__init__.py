"""Pi Continuity Harness."""
