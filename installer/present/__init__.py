"""What the user sees: progress, reports, colour, redaction of secrets."""
