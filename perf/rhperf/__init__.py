"""perf/rhperf: performance records, the regression gate, A/B between builds, peers, plots
(docs/performance.md). Entry point: `python3 -m rhperf` (through tools/rh)."""
