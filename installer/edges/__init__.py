"""Everything that touches the world: processes, the machine, the network, files."""
