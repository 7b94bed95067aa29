"""The network surface: an HTTP service and an MCP server over the same operations."""
