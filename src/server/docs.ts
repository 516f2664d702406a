import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { notFound } from '../lib/http-error.ts';
import { defineRoute, RAW, type Route } from '../lib/route.ts';

// The only files of swagger-ui-dist we serve (no directory listing, no path from the client reaches the disk).
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/** Our replacement for swagger-ui-dist's initializer: it loads this server's /openapi.json. */
export const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout',
  });
};
`;

/** The /docs page: absolute asset URLs, so it works with or without a trailing slash. */
export const DOCS_HTML = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>svc API</title>
    <link rel="stylesheet" type="text/css" href="/docs/swagger-ui.css" />
    <link rel="stylesheet" type="text/css" href="/docs/index.css" />
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js" charset="UTF-8"></script>
    <script src="/docs/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
    <script src="/docs/swagger-initializer.js" charset="UTF-8"></script>
  </body>
</html>
`;

/** Folder of the installed swagger-ui-dist package. */
export function swaggerUiDir(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

/** GET /docs (Swagger UI) and GET /docs/:file (its assets, read once and kept in memory). */
export function docsRoutes(): Route[] {
  const cache = new Map<string, Promise<Buffer>>();
  const load = (file: string) => {
    let p = cache.get(file);
    if (!p) { p = readFile(join(swaggerUiDir(), file)); cache.set(file, p); p.catch(() => cache.delete(file)); }
    return p;
  };
  return [
    defineRoute({
      method: 'GET', path: '/docs', operationId: 'docs', summary: 'Swagger UI for this API', tags: ['system'], access: 'public',
      responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
      handler: ({ res }) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' }).end(DOCS_HTML);
        return RAW;
      },
    }),
    defineRoute({
      method: 'GET', path: '/docs/:file', operationId: 'docs_asset', summary: 'Swagger UI asset', tags: ['system'], access: 'public',
      hidden: true, params: Type.Object({ file: Type.String({ maxLength: 64 }) }),
      responses: { 200: { description: 'Static file' }, 404: { description: 'Unknown file' } },
      handler: async ({ params, res }) => {
        const { file } = params;
        if (file === 'swagger-initializer.js') {
          res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' }).end(INITIALIZER);
          return RAW;
        }
        const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
        if (!type) throw notFound('Not Found');
        const data = await load(file);
        res.writeHead(200, { 'content-type': type, 'content-length': data.length, 'cache-control': 'public, max-age=86400' }).end(data);
        return RAW;
      },
    }),
  ];
}
