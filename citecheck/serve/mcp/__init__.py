"""mcp: citecheck's four tools served to an assistant: the Model Context Protocol (`citecheck mcp`, stdio).

Owns: `inputs` (the documents folder every file argument must lie in, the size caps, bad input as one
`ToolInputError` line), `tools` (check_document, verify_claim, extract, check_answer: the CLI's flows on
arguments instead of files and options), `server` (the official MCP SDK's server: registration, unknown
arguments refused, every failure a tool error with no secret and no absolute path, the `mcp` command).
Imports: what `serve` may (the flows, verdict, audit, source, web, context, foundation) and the `mcp` SDK.
"""
