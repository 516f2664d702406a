// GET /auth/device: the small page where a signed-in person sees who they are and enters the code
// their terminal shows (`svc login`); not signed in, it offers the enabled providers.
import { randomBytes } from 'node:crypto';
import { Type } from '../../lib/typebox.ts';
import { defineRoute, RAW, type Principal, type Route } from '../../lib/route.ts';
import type { SsoHttp } from './http.ts';
import { normalizeUserCode } from './device.ts';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1d232a}
h1{font-size:1.4rem}code,input{font:1.1rem ui-monospace,monospace}input{letter-spacing:.15em;text-transform:uppercase;padding:.4rem;width:13ch}
button,a.button{font:inherit;padding:.45rem .9rem;border:1px solid #2b5fd9;background:#2b5fd9;color:#fff;border-radius:4px;text-decoration:none;cursor:pointer}
button.plain{background:#fff;color:#2b5fd9}.who{background:#f2f5fa;padding:.6rem .8rem;border-radius:4px}#result{min-height:1.5em;font-weight:600}`;

const SCRIPT = `const f=document.getElementById('code-form'),out=document.getElementById('result');
if(f)f.addEventListener('submit',async(e)=>{e.preventDefault();out.textContent='…';
const r=await fetch('/auth/cli/authorize',{method:'POST',headers:{'content-type':'application/json'},body:JSON.stringify({user_code:f.user_code.value})});
const j=await r.json().catch(()=>({}));out.textContent=r.ok?'Device authorized: return to your terminal.':(j.detail||('Error '+r.status));out.className=r.ok?'ok':'err';});
const lo=document.getElementById('logout');if(lo)lo.addEventListener('click',async()=>{await fetch('/auth/logout',{method:'POST'});location.reload();});`;

interface View { base: string; code: string; who?: { name: string; email: string | null; role: string }; providers: string[] }

/** The page's HTML for one view (pure). */
export function devicePage(v: View, nonce: string): string {
  const next = `/auth/device${v.code ? `?user_code=${encodeURIComponent(v.code)}` : ''}`;
  const body = v.who
    ? `<p class="who" id="who">Signed in as <strong>${esc(v.who.name)}</strong>${v.who.email ? ` (${esc(v.who.email)})` : ''} · role <strong>${esc(v.who.role)}</strong></p>
<h2>Sign in the svc CLI</h2><p>Run <code>svc login --server ${esc(v.base)}</code> in your terminal, then enter the code it shows.
Only enter a code that your own terminal shows.</p>
<form id="code-form"><label>Code <input name="user_code" value="${esc(v.code)}" placeholder="XXXX-XXXX" maxlength="9" autocomplete="off" required></label>
<button type="submit">Authorize</button></form><p id="result" role="status"></p><p><button class="plain" id="logout" type="button">Sign out</button></p>`
    : `<p>Sign in to continue.</p><p>${v.providers.map((p) => `<a class="button" href="/auth/login?provider=${p}&amp;next=${encodeURIComponent(next)}">Sign in with ${p.toUpperCase()}</a>`).join(' ')}</p>`;
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>svc · sign in</title><style nonce="${nonce}">${STYLE}</style></head><body><h1>svc</h1>${body}<script nonce="${nonce}">${SCRIPT}</script></body></html>`;
}

function who(http: SsoHttp, p: Principal | undefined): View['who'] {
  const user = p ? http.sso.users.get(p.actor) : undefined;
  return user && p ? { name: user.display_name ?? user.email ?? user.subject, email: user.email, role: p.role } : undefined;
}

/** GET /auth/device. */
export function devicePageRoute(http: SsoHttp): Route {
  return defineRoute({
    method: 'GET', path: '/auth/device', operationId: 'auth_device_page', summary: 'Page: who is signed in, and the code entry of svc login', tags: ['auth'], access: 'public',
    query: Type.Object({ user_code: Type.Optional(Type.String({ maxLength: 32 })) }),
    responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
    handler: async ({ req, res, query }) => {
      const nonce = randomBytes(16).toString('base64');
      const on = http.sso.enabled;
      const html = devicePage({
        base: http.baseUrl(req), code: normalizeUserCode(query.user_code ?? '') ?? '',
        who: who(http, await http.signedIn(req)), providers: (['oidc', 'saml'] as const).filter((p) => on[p]),
      }, nonce);
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'x-frame-options': 'DENY',
        'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
      }).end(html);
      return RAW;
    },
  });
}
