import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { basename, extname, join, relative } from 'node:path';
import { parse as parseYaml } from 'yaml';

/** Kebab-case slugs, as the summary route accepts them. */
export const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** One Markdown post of the content folder. */
export interface Post {
  slug: string;
  title: string;
  draft: boolean;
  /** Public path of the post (front matter `url`, else /blog/<slug>). */
  url: string;
  /** Markdown body without the front matter. */
  text: string;
  /** sha256 of the body: the summary cache key. */
  hash: string;
  /** File path relative to the content folder (for messages). */
  file: string;
}

/** A heading-delimited part of a post, the unit the assistant retrieves and cites. */
export interface Section {
  id: string;
  slug: string;
  title: string;
  heading: string;
  url: string;
  text: string;
}

const FRONT = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** Split YAML front matter from the body; a file without front matter has `{}`; bad YAML throws. */
export function splitFrontMatter(source: string): { meta: Record<string, unknown>; body: string } {
  const m = FRONT.exec(source.replace(/^\uFEFF/, ''));
  if (!m) return { meta: {}, body: source };
  const meta = parseYaml(m[1]!) as unknown;
  return { meta: typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? (meta as Record<string, unknown>) : {}, body: source.replace(/^\uFEFF/, '').slice(m[0].length) };
}

/** A post from one file's text, or the reason it is skipped. */
export function parsePost(file: string, source: string): Post | { skip: string } {
  let parsed;
  try {
    parsed = splitFrontMatter(source);
  } catch (e) {
    return { skip: `front matter is not valid YAML (${(e as Error).message.split('\n')[0]})` };
  }
  const { meta, body } = parsed;
  const slug = typeof meta.slug === 'string' ? meta.slug : basename(file, extname(file));
  if (!SLUG.test(slug)) return { skip: `slug '${slug}' is not kebab-case` };
  const heading = /^#\s+(.+)$/m.exec(body)?.[1]?.trim();
  const title = typeof meta.title === 'string' && meta.title.trim() ? meta.title.trim() : heading ?? slug;
  const url = typeof meta.url === 'string' && meta.url ? meta.url : `/blog/${slug}`;
  const draft = meta.draft === true || meta.draft === 'true';
  return { slug, title, draft, url, text: body, hash: createHash('sha256').update(body).digest('hex'), file };
}

const anchor = (h: string) => h.toLowerCase().replace(/[^\p{L}\p{N}\s-]/gu, '').trim().replace(/\s+/g, '-');

/** Cut a post at its ## and ### headings; text before the first heading belongs to the post itself. */
export function sectionsOf(post: Post): Section[] {
  const out: Section[] = [];
  let heading = '', lines: string[] = [];
  const flush = () => {
    const text = lines.join('\n').trim();
    if (text) out.push({ id: `${post.slug}#${out.length}`, slug: post.slug, title: post.title, heading, url: heading ? `${post.url}#${anchor(heading)}` : post.url, text });
  };
  for (const line of post.text.split(/\r?\n/)) {
    const h = /^#{2,3}\s+(.+?)\s*#*$/.exec(line);
    if (h) { flush(); heading = h[1]!; lines = []; } else if (!/^#\s/.test(line)) lines.push(line);
  }
  flush();
  return out;
}

async function markdownFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(entries.map(async (e) => {
    const p = join(dir, e.name);
    if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules') return markdownFiles(p);
    return e.isFile() && /\.mdx?$/i.test(e.name) ? [p] : [];
  }));
  return nested.flat().sort();
}

/** Every post under `dir` (drafts included, marked); skipped files and duplicate slugs are reported. */
export async function loadPosts(dir: string): Promise<{ posts: Post[]; skipped: string[] }> {
  const posts: Post[] = [], skipped: string[] = [];
  const seen = new Set<string>();
  for (const abs of await markdownFiles(dir)) {
    const file = relative(dir, abs);
    const p = parsePost(file, await readFile(abs, 'utf8'));
    if ('skip' in p) skipped.push(`${file}: ${p.skip}`);
    else if (seen.has(p.slug)) skipped.push(`${file}: slug '${p.slug}' already used by another file`);
    else { seen.add(p.slug); posts.push(p); }
  }
  return { posts, skipped };
}
