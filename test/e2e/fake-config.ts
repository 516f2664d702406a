// The `.sdd/config.yaml` of the end-to-end tests: the fake agent as the generic adapter and fast ticks.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT } from '../helpers/server.ts';

export const FAKE_AGENT = join(PROJECT, 'fixtures', 'fake-agent.mjs');

/**
 * Write `.sdd/config.yaml` in `dir`; `extra` is appended as is (e.g. a gates block). `mode: 'mcp'` gives the
 * fake agent the svc MCP server (`--mcp-config {mcp_config}`, as Claude Code gets it): it reports with the tools.
 */
export function writeFakeAgentConfig(dir: string, extra = '', mode: 'http' | 'mcp' = 'http'): void {
  mkdirSync(join(dir, '.sdd'), { recursive: true });
  const mcp = mode === 'mcp' ? ' --mcp-config {mcp_config}' : '';
  writeFileSync(join(dir, '.sdd', 'config.yaml'), [
    'orchestrator:', '  tick_ms: 150', '  batch_size: 3',
    'agents:', '  default: generic', '  generic:', `    command: "node ${FAKE_AGENT} --prompt-file {prompt_file}${mcp}"`,
    extra, '',
  ].join('\n'));
}

/** FAKE: lines for a task description. */
export const fake = (...steps: string[]): string => steps.map((l) => `FAKE: ${l}`).join('\n');
