"""Commands: each sequences the steps of one thing the user asked for."""
