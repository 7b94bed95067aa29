"""The portability study: TRACE's return episodes through other memory backends.

Each episode's history is written through one backend (readmit's own store, the
LangGraph store under `readmit.integrations.langgraph`, a Mem0 bank under
`readmit.integrations.mem0`), the returning agent returns, and its view is what
its reads through that backend show. `readmit.bench.backends.study` runs and
scores them side by side.
"""

BACKENDS = ("readmit", "langgraph", "mem0")
"""The backends ``readmit bench --backend`` knows, readmit's own store first."""
