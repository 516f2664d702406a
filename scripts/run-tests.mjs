#!/usr/bin/env node
// Runs every test file in its own process (uvu through tsx), two at a time, and ends with one line
// "N passed, N failed, N skipped". Exits non-zero on any failure or on a file that fails to load.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { cpus } from 'node:os';

const roots = process.argv.slice(2).length ? process.argv.slice(2) : ['test'];
const files = roots.flatMap((r) => collect(r)).sort();
const parallel = Number(process.env.TEST_PARALLEL ?? Math.max(1, Math.min(2, cpus().length)));
// The long reliability run (RELIABILITY_LONG=1) has files that take many minutes; see RELIABILITY.md.
const fileTimeoutMs = Number(process.env.TEST_FILE_TIMEOUT_MS ?? (process.env.RELIABILITY_LONG ? 3_600_000 : 300_000));
let passed = 0, failed = 0, skipped = 0;
const broken = [];

function collect(path) {
  if (statSync(path).isFile()) return /\.test\.ts$/.test(path) ? [path] : [];
  return readdirSync(path).flatMap((n) => (n === 'helpers' || n === 'fixtures' ? [] : collect(join(path, n))));
}

function runFile(file) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', SVC_CHECK_JSON_TEXT: '1' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => { out += `\n[run-tests] ${file} timed out after ${fileTimeoutMs} ms\n`; child.kill('SIGKILL'); }, fileTimeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const total = Number(/Total:\s+(\d+)/.exec(out)?.[1] ?? NaN);
      const ok = Number(/Passed:\s+(\d+)/.exec(out)?.[1] ?? NaN);
      const skip = Number(/Skipped:\s+(\d+)/.exec(out)?.[1] ?? 0);
      process.stdout.write(`\n── ${relative(process.cwd(), file)} (exit ${code})\n${out}`);
      if (Number.isNaN(total) || Number.isNaN(ok)) { failed += 1; broken.push(`${file}: no summary (failed to load or crashed)`); }
      else {
        passed += ok; skipped += skip; failed += total - ok;
        if (code !== 0 && total === ok) { failed += 1; broken.push(`${file}: exit ${code}`); }
        else if (total !== ok) broken.push(`${file}: ${total - ok} failed`);
      }
      resolve();
    });
  });
}

const queue = [...files];
await Promise.all(Array.from({ length: parallel }, async () => { while (queue.length) await runFile(queue.shift()); }));
if (broken.length) process.stdout.write(`\nFailures:\n${broken.map((b) => `  ${b}`).join('\n')}\n`);
process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(failed > 0 || files.length === 0 ? 1 : 0);
