// Build step after tsc: dist/lib/typebox.js becomes one bundled file of the same exports (src/lib/typebox.ts says why).
import { build } from 'esbuild';

await build({
  entryPoints: ['src/lib/typebox.ts'],
  outfile: 'dist/lib/typebox.js',
  allowOverwrite: true,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
});
