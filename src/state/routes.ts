// `/state.git`: refs/sdd/state over git's smart HTTP, read-only, behind the API's authentication.
import { Type } from '../lib/typebox.ts';
import { forbidden } from '../lib/http-error.ts';
import type { Logger } from '../lib/log.ts';
import { defineRoute, RAW, type Route } from '../lib/route.ts';
import type { StateMirror } from '../store/mirror.ts';
import { advertise, uploadPack } from '../smart-http/index.ts';

const READ_ONLY = '/state.git is read-only: git-receive-pack (push) is refused';
const SERVICE = Type.Object({ service: Type.Optional(Type.String({ maxLength: 64 })) });
const GIT_BODY = { description: 'git smart HTTP stream', contentType: 'application/octet-stream' };
const ERRORS = { 401: { description: 'Missing or invalid token' }, 403: { description: 'Push, or a service other than git-upload-pack' } };

/**
 * GET info/refs and POST git-upload-pack (any role); receive-pack answers 403. Every request first
 * brings the mirror up to refs/sdd/state, so a fetch sees the last state commit.
 */
export function stateGitRoutes(deps: { mirror: StateMirror; log: Logger }): Route[] {
  const opts = () => ({ gitdir: deps.mirror.gitdir, log: deps.log });
  return [
    defineRoute({
      method: 'GET', path: '/state.git/info/refs', operationId: 'stateGitRefs', tags: ['state'], access: 'read', query: SERVICE,
      summary: 'refs/sdd/state advertisement for git fetch and git clone (smart HTTP, protocol v0 and v2)',
      responses: { 200: GIT_BODY, ...ERRORS },
      handler: async ({ req, res, query }) => {
        if (query.service === 'git-receive-pack') throw forbidden(READ_ONLY);
        if (query.service !== 'git-upload-pack') throw forbidden('only the git-upload-pack service is served (smart HTTP)');
        await deps.mirror.current();
        await advertise(req, res, opts());
        return RAW;
      },
    }),
    defineRoute({
      method: 'POST', path: '/state.git/git-upload-pack', operationId: 'stateGitUploadPack', tags: ['state'], access: 'read',
      summary: 'Packs of refs/sdd/state history for git fetch and git clone (stateless RPC, streamed)',
      responses: { 200: GIT_BODY, ...ERRORS, 415: { description: 'Not a git-upload-pack request' } },
      handler: async ({ req, res }) => {
        await deps.mirror.current();
        await uploadPack(req, res, opts());
        return RAW;
      },
    }),
    defineRoute({
      method: 'POST', path: '/state.git/git-receive-pack', operationId: 'stateGitReceivePack', tags: ['state'], access: 'read',
      summary: 'Always 403: /state.git is read-only', responses: ERRORS,
      handler: () => { throw forbidden(READ_ONLY); },
    }),
  ];
}
