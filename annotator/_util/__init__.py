"""Small technical helpers shared by the core: bit sets, files, CSV cells, child processes, GC."""
