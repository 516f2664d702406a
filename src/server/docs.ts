import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Type } from '../lib/typebox.ts';
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

/**
 * Our replacement for swagger-ui-dist's initializer: it loads this server's /openapi.json, and the token box above
 * the UI keeps a bearer token in this browser (localStorage) that "Try it out" sends. The published description
 * stays free of security schemes (INTERFACE.md Authentication 12); the header is added by a request interceptor.
 */
export const INITIALIZER = `(function () {
  var KEY = 'svc.docs.token';
  function read() { try { return localStorage.getItem(KEY) || ''; } catch (e) { return ''; } }
  function write(v) { try { if (v) localStorage.setItem(KEY, v); else localStorage.removeItem(KEY); } catch (e) { /* storage off */ } }
  function show() {
    var saved = read();
    document.getElementById('svc-token').value = '';
    document.getElementById('svc-token-state').textContent = saved
      ? 'token saved in this browser (…' + saved.slice(-4) + '); Try it out sends it'
      : 'no token: calls other than health and docs answer 401';
  }
  window.onload = function () {
    document.getElementById('svc-token-form').onsubmit = function (ev) {
      ev.preventDefault();
      var v = document.getElementById('svc-token').value.trim().replace(/^Bearer\\s+/i, '');
      if (v) write(v);
      show();
    };
    document.getElementById('svc-token-forget').onclick = function () { write(''); show(); };
    show();
    window.ui = SwaggerUIBundle({
      url: '/openapi.json',
      dom_id: '#swagger-ui',
      deepLinking: true,
      presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
      plugins: [SwaggerUIBundle.plugins.DownloadUrl],
      layout: 'StandaloneLayout',
      requestInterceptor: function (req) {
        var t = read();
        if (t && !req.headers.Authorization && !req.headers.authorization) req.headers.Authorization = 'Bearer ' + t;
        return req;
      },
    });
  };
})();
`;

/** The /docs page: the token box, then Swagger UI; absolute asset URLs, so it works with or without a trailing slash. */
export const DOCS_HTML = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>svc API</title>
    <link rel="stylesheet" type="text/css" href="/docs/swagger-ui.css" />
    <link rel="stylesheet" type="text/css" href="/docs/index.css" />
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32" />
    <style>
      #svc-token-form { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; max-width: 1460px; margin: 0 auto;
        padding: 12px 20px; font-family: sans-serif; font-size: 14px; border-bottom: 1px solid #ddd; }
      #svc-token-form label { font-weight: bold; }
      #svc-token { flex: 1 1 320px; padding: 6px 8px; font-family: monospace; }
      #svc-token-form button { padding: 6px 14px; cursor: pointer; }
      #svc-token-state { color: #555; }
    </style>
  </head>
  <body>
    <form id="svc-token-form" autocomplete="off">
      <label for="svc-token">svc token</label>
      <input id="svc-token" name="svc-token" type="password" placeholder="paste a bearer token (e.g. .sdd/secrets/admin.token)" />
      <button type="submit" id="svc-token-save">Save</button>
      <button type="button" id="svc-token-forget">Forget</button>
      <span id="svc-token-state"></span>
    </form>
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
