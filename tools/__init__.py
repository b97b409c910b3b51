"""The results tooling: benchmark JSON to bench.csv, the charts and tables, the READMEs' generated
regions, the lessons' profiler tables, the diagrams and the prose number checker. One entry point,
`python3 -m tools JOB ...` (tools/__main__.py); run it from the repository's root."""
