export { createMcp, type Mcp, type McpDeps } from './setup.ts';
export { bridgeStdio, type BridgeOptions } from './stdio.ts';
export { TOOLS } from './tools.ts';
export { PROMPTS } from './prompt.ts';
