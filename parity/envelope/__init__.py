"""The production envelope: per kernel and target, the largest sizes that still port and the first limit beyond."""
