import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PROJECT } from './helpers/server.ts';

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : n.endsWith('.ts') ? [join(dir, n)] : []));

test('ARCHITECTURE.md names every source file, and only files that exist', () => {
  const doc = readFileSync(join(PROJECT, 'ARCHITECTURE.md'), 'utf8');
  const sources = files(join(PROJECT, 'src')).map((f) => f.slice(PROJECT.length + 1));
  const missing = sources.filter((f) => !doc.includes('`' + f + '`'));
  assert.equal(missing, [], `add one line for each of: ${missing.join(', ')}`);
  const named = [...doc.matchAll(/`(src\/[^`]+\.ts)`/g)].map((m) => m[1]!);
  const stale = named.filter((f) => !sources.includes(f));
  assert.equal(stale, [], `remove lines for files that no longer exist: ${stale.join(', ')}`);
});

test.run();
