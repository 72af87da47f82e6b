"""The tools a model may call during a turn: one module per tool, found by the registry.

To add a tool, write `turn/tools/<name>.py` with an `Args` pydantic model, an async
`run(context, args) -> ToolResult` and `TOOL = Tool(name, description, Args, run)`.
"""
