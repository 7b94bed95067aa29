"""readmit where agent teams already keep memory: LangGraph, Mem0, the OpenAI Agents SDK.

Each integration is an optional extra (``pip install '.[langgraph]'``, ``[mem0]``,
``[agents]``) and wraps the library's own objects, so adopting readmit changes how a
store, memory or session is constructed, not the application's logic. They share
`readmit.integrations.team.Member`: one agent acting on a readmit store in-process.
"""
