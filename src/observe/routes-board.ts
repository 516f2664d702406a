import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type } from '../lib/typebox.ts';
import { notFound } from '../lib/http-error.ts';
import { defineRoute, RAW, type Route } from '../lib/route.ts';
import type { Git } from '../store/git-cli.ts';
import { isValidId } from '../store/ids.ts';
import type { BoardSource } from './board-source.ts';
import { fileHistory } from './history.ts';

/** Where the board page's files are: `board/` at the package root (shipped by npm as they are: no build step). */
export const BOARD_DIR = fileURLToPath(new URL('../../board/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml',
};
// The page loads only its own files and talks only to this server.
const HEADERS = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'cache-control': 'no-cache',
};

// A package without its board/ folder serves 404s there rather than failing to start.
function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

const HistoryEntry = Type.Object({
  commit: Type.String(), committed_at: Type.String(), message: Type.String(), actors: Type.Array(Type.String()),
  status: Type.Union([Type.String(), Type.Null()]), version: Type.Union([Type.Integer(), Type.Null()]),
  updated_at: Type.Union([Type.String(), Type.Null()]), status_reason: Type.Union([Type.String(), Type.Null()]),
});
const TaskHistory = Type.Object({ task_id: Type.String(), ref: Type.String(), entries: Type.Array(HistoryEntry) }, { $id: 'TaskHistory' });

/** GET /board (the live board page) and its files, and GET /tasks/{id}/history (a task's state commits). */
export function boardRoutes(d: { source: BoardSource; git: Git; dir?: string }): Route[] {
  const dir = d.dir ?? BOARD_DIR;
  // Only the files the folder holds at start are served; no client path reaches the disk.
  const files = new Map<string, string>(listDir(dir).filter((n) => TYPES[extname(n)]).map((n) => [n, TYPES[extname(n)]!]));
  const cache = new Map<string, Buffer>();
  const serve = (name: string, res: import('node:http').ServerResponse) => {
    const type = files.get(name);
    if (!type) throw notFound('Not Found');
    let body = cache.get(name);
    if (!body) cache.set(name, (body = readFileSync(join(dir, name))));
    res.writeHead(200, { 'content-type': type, 'content-length': String(body.length), ...HEADERS }).end(body);
    return RAW;
  };
  const page = { 200: { description: 'The page', contentType: 'text/html' } };
  return [
    defineRoute({
      method: 'GET', path: '/board', operationId: 'board_page', summary: 'The live board: columns by status, card details, log tail, actions (sign in or paste a token)', tags: ['observability'],
      access: 'public', responses: page, handler: ({ res }) => serve('index.html', res),
    }),
    defineRoute({
      method: 'GET', path: '/board/:file', operationId: 'board_asset', summary: 'A file of the board page', tags: ['observability'], access: 'public', hidden: true,
      params: Type.Object({ file: Type.String({ maxLength: 100 }) }), responses: page, handler: ({ params, res }) => serve(params.file, res),
    }),
    defineRoute({
      method: 'GET', path: '/tasks/:task_id/history', operationId: 'task_history', summary: 'State commits of refs/sdd/state that changed the task, newest first, with its status at each', tags: ['tasks'],
      access: 'read', params: Type.Object({ task_id: Type.String() }), query: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })), tenant: Type.Optional(Type.String()) }),
      responses: { 200: { description: 'History', schema: TaskHistory }, 404: { description: 'Task not found', schema: Type.Object({ detail: Type.String() }) } },
      handler: async (ctx) => {
        const { tenant } = ctx.who;
        const id = ctx.params.task_id;
        if (!isValidId(id)) throw notFound(`Task '${String(id).slice(0, 200)}' not found`);
        d.source.visible(id, tenant);
        return { task_id: id, ref: 'refs/sdd/state', entries: await fileHistory(d.git, d.source.layout.task(id), (ctx.query as { limit?: number }).limit ?? 50) };
      },
    }),
  ];
}
