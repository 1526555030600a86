"""Pure decisions and data: no I/O, no processes, no network."""
