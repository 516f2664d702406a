// A local stand-in for both sides of an IndexNow submission: the public site (GET /sitemap.xml and
// child sitemaps) and an IndexNow endpoint (POST /indexnow) that records what it receives.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeIndexNow {
  /** Origin serving the sitemaps, e.g. http://127.0.0.1:1234 */
  origin: string;
  /** The IndexNow endpoint URL. */
  endpoint: string;
  /** Path → XML served with 200; a path absent here answers `sitemapStatus` or 404. */
  sitemaps: Map<string, string>;
  sitemapStatus: number | null;
  /** Status the IndexNow endpoint answers (200 by default; IndexNow also uses 202). */
  submitStatus: number;
  /** Bodies POSTed to the endpoint, parsed, with their content type. */
  submissions: { body: any; contentType: string | undefined }[];
  close(): Promise<void>;
}

/** A sitemap listing `urls`. */
export const urlset = (urls: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.map((u) => `  <url><loc>${u.replace(/&/g, '&amp;')}</loc></url>`).join('\n')}\n</urlset>\n`;

/** A sitemap index listing child sitemaps. */
export const sitemapIndex = (children: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${children.map((u) => `  <sitemap><loc>${u}</loc></sitemap>`).join('\n')}\n</sitemapindex>\n`;

export async function startFakeIndexNow(): Promise<FakeIndexNow> {
  const fake: FakeIndexNow = {
    origin: '', endpoint: '', sitemaps: new Map(), sitemapStatus: null, submitStatus: 200, submissions: [], close: async () => undefined,
  };
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => (text += d)).on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      if (req.method === 'POST' && path === '/indexnow') {
        fake.submissions.push({ body: JSON.parse(text), contentType: req.headers['content-type'] });
        res.writeHead(fake.submitStatus).end();
        return;
      }
      const xml = fake.sitemaps.get(path);
      if (req.method === 'GET' && xml !== undefined) res.writeHead(200, { 'content-type': 'application/xml' }).end(xml);
      else res.writeHead(fake.sitemapStatus ?? 404).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.endpoint = `${fake.origin}/indexnow`;
  fake.close = () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); });
  return fake;
}
