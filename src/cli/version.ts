import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The package version (package.json next to src/ and dist/). */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The package's own folder (package.json, node_modules of an install, board/). */
export const PACKAGE_ROOT: string = fileURLToPath(new URL('../..', import.meta.url));
