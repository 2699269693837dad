"""float64 references in plain torch, one module per kernel family; they run on the CPU."""
