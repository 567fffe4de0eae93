"""Artifact writers: graph.json, GRAPH_REPORT.md, brief.json, graph.html and the exports."""
