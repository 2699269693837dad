"""Reports: REPORT.md per backend, its compile sections, DIVERGENCE.md, the heatmap, env info."""
