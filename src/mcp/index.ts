// Only what `svc up` mounts: the SDK loads with the first /mcp request, `svc mcp` imports stdio.ts itself.
export { createMcp, type Mcp, type McpDeps } from './setup.ts';
export { TOOLS } from './tools.ts';
