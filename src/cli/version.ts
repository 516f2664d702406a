import { readFileSync } from 'node:fs';

/** The package version (package.json next to src/ and dist/). */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
