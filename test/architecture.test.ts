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

test('the task board is reached only through src/tasks/index.ts (the narrow Tasks interface)', () => {
  const inside = join(PROJECT, 'src', 'tasks');
  const reaching = files(join(PROJECT, 'src')).filter((f) => !f.startsWith(inside + '/'))
    .filter((f) => /from '(\.\.\/)+tasks\/(?!index\.ts')[^']+'/.test(readFileSync(f, 'utf8')))
    .map((f) => f.slice(PROJECT.length + 1));
  assert.equal(reaching, [], `import these from '../tasks/index.ts': ${reaching.join(', ')}`);
  const door = readFileSync(join(inside, 'index.ts'), 'utf8');
  assert.not.match(door, /\b(TaskService|Board)\b/, 'index.ts hands out the service or the board');
});

test.run();
