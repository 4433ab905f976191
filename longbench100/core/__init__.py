"""Core: errors, paths, atomic writes, caches, process exit, interrupts, workers, progress, lengths, digests, version."""
