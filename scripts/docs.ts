// Regenerates the reference pages of docs/ from the code: `npm run docs` (both), `docs:config`, `docs:cli`.
// test/docs.test.ts fails when a committed page differs from what this writes.
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../src/cli/main.ts';
import { cliReference } from '../src/cli/reference.ts';
import { configReference } from '../src/config/reference.ts';

const DOCS = resolve(fileURLToPath(import.meta.url), '..', '..', 'docs');

/** Each generated page: file name under docs/ and its text. */
export const PAGES: Record<string, () => Promise<string>> = {
  'configuration.md': async () => configReference(),
  'cli.md': () => cliReference(main),
};

const which = process.argv[2];
if (import.meta.url === `file://${process.argv[1]}`) {
  const names = which === 'config' ? ['configuration.md'] : which === 'cli' ? ['cli.md'] : Object.keys(PAGES);
  for (const name of names) {
    writeFileSync(join(DOCS, name), await PAGES[name]!());
    process.stdout.write(`wrote docs/${name}\n`);
  }
}
